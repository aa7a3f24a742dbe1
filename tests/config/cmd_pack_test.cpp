// `tessera pack validate|merge|inspect` through its entry function: exit codes, the merged file's
// contents, and refusal to overwrite without --force.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config_test_util.hpp"
#include "tessera/file_util.hpp"
#include "tessera/pack.hpp"

namespace tessera::cli {
int cmd_pack(int argc, char** argv);
}

namespace tessera {
namespace {

using testing::error_of;
using ::testing::HasSubstr;

int run_pack(std::vector<std::string> args) {
  args.insert(args.begin(), "pack");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return cli::cmd_pack(static_cast<int>(argv.size()), argv.data());
}

std::string fixture(const std::string& name) {
  return testing::source_path("tests/config/data/" + name);
}

TEST(CmdPack, ValidateExitCodes) {
  testing::ScratchDir dir;
  EXPECT_EQ(run_pack({"validate", fixture("pack_device.yaml"), fixture("merge_a.yaml")}), 0);
  const std::string bad = dir.write("bad.yaml", "schema_version: 1\nplugin: mali\n");
  EXPECT_EQ(run_pack({"validate", fixture("pack_device.yaml"), bad}), 1);
  EXPECT_EQ(run_pack({"validate", fixture("pack_schema2.yaml")}), 1);
  EXPECT_EQ(run_pack({"inspect", fixture("pack_device.yaml")}), 0);
  EXPECT_EQ(run_pack({"frobnicate"}), 2);
}

TEST(CmdPack, MergeWritesFasterEntriesAndNeedsForceToReplace) {
  testing::ScratchDir dir;
  const std::string out = dir.file("merged.yaml");
  ASSERT_EQ(run_pack({"merge", "-o", out, fixture("merge_a.yaml"), fixture("merge_b.yaml")}), 0);
  const Pack m = load_pack(out);
  ASSERT_EQ(m.entries.size(), 3u);
  EXPECT_EQ(m.entries[0].schedule, "conv2d.nchw4c.winograd");
  EXPECT_DOUBLE_EQ(m.entries[0].time_us, 80);
  EXPECT_DOUBLE_EQ(m.entries[1].time_us, 5);
  EXPECT_DOUBLE_EQ(m.entries[2].time_us, 7.5);

  const std::string before = read_file(out, "file", kMaxYamlFileBytes);
  const std::string refused = error_of([&] {
    run_pack({"merge", "-o", out, fixture("merge_a.yaml")});
  });
  // As report_error prints it: the option written as the command's flag.
  EXPECT_THAT(spell_options(refused, Frontend::kCli),
              HasSubstr("'" + out + "' already exists; pass --force"));
  EXPECT_EQ(read_file(out, "file", kMaxYamlFileBytes), before);
  ASSERT_EQ(run_pack({"merge", "--force", "-o", out, fixture("merge_a.yaml")}), 0);
  const Pack only_a = load_pack(out);
  ASSERT_EQ(only_a.entries.size(), 2u);
  EXPECT_DOUBLE_EQ(only_a.entries[0].time_us, 100);
}

TEST(CmdPack, MergeArgumentErrors) {
  EXPECT_THAT(error_of([] {
                run_pack({"merge", fixture("merge_a.yaml")});
              }),
              HasSubstr("give the output file with -o OUT"));
  EXPECT_THAT(error_of([] {
                run_pack({"merge", "-o", "/tmp/x.yaml", "--fast"});
              }),
              HasSubstr("unknown option '--fast'"));
}

}  // namespace
}  // namespace tessera
