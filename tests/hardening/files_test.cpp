// Untrusted files: every reader takes regular files only (a FIFO never hangs, /dev/zero never
// exhausts memory, a directory is named as one), checks the size against the format's limit
// before reading, and YAML with a repeated key is refused. Appending to a log whose last line is
// partial starts a new line first; a symlink in place of the log is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "model_builder.hpp"
#include "tessera/deploy_config.hpp"
#include "tessera/file_util.hpp"
#include "tessera/npy.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/pack.hpp"
#include "tessera/tuner.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using test::scratch_dir;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no tessera::Error was thrown";
  return "";
}

// Every reader of an untrusted file, by format.
const std::vector<std::pair<const char*, std::function<void(const std::string&)>>>& readers() {
  static const std::vector<std::pair<const char*, std::function<void(const std::string&)>>> r = {
      {"model", [](const std::string& p) { import_onnx_file(p); }},
      {"tensor", [](const std::string& p) { read_onnx_tensor_file(p); }},
      {"npy", [](const std::string& p) { read_npy(p); }},
      {"pack", [](const std::string& p) { load_pack(p); }},
      {"deploy", [](const std::string& p) { load_deploy_config(p); }},
      {"tune log", [](const std::string& p) { tune::read_log(p); }},
      {"pack build", [](const std::string& p) { tune::pack_from_logs({p}); }},
  };
  return r;
}

TEST(SpecialFiles, FifoIsRefusedWithoutBlocking) {
  const std::string fifo = (scratch_dir() / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Before the fix, opening the FIFO waited forever for a writer; each reader must return.
  // Pair members, not structured bindings: C++17 lambdas cannot capture those (clang refuses).
  for (const auto& reader : readers()) {
    const char* what = reader.first;
    EXPECT_THAT(error_of([&] { reader.second(fifo); }), AllOf(HasSubstr(fifo), HasSubstr("FIFO")))
        << what;
  }
}

TEST(SpecialFiles, DevZeroIsRefused) {
  for (const auto& reader : readers()) {
    const char* what = reader.first;
    EXPECT_THAT(error_of([&] { reader.second("/dev/zero"); }),
                AllOf(HasSubstr("/dev/zero"), HasSubstr("character device")))
        << what;
  }
}

TEST(SpecialFiles, DirectoryIsRefused) {
  const std::string dir = (scratch_dir() / "a_dir.yaml").string();
  fs::create_directories(dir);
  for (const auto& reader : readers()) {
    const char* what = reader.first;
    EXPECT_THAT(error_of([&] { reader.second(dir); }),
                AllOf(HasSubstr(dir), HasSubstr("a directory")))
        << what;
  }
}

TEST(FileLimits, SizeIsCheckedBeforeReading) {
  const std::string path = (scratch_dir() / "big.yaml").string();
  test::write_file(path, std::string(100, 'x'));
  EXPECT_THAT(error_of([&] { read_file(path, "YAML file", 64); }),
              AllOf(HasSubstr(path), HasSubstr("100 bytes, more than the limit of 64 bytes")));
  EXPECT_EQ(read_file(path, "YAML file", 100), std::string(100, 'x'));
  // The per-format limits are those the parsers can take.
  EXPECT_EQ(kMaxModelFileBytes, 2147483647);
  EXPECT_LE(kMaxYamlFileBytes, int64_t{64} << 20);
}

TEST(FileLimits, NpyLargerThanTheMemoryLimitIsNotRead) {
  // Larger than the limit plus the largest header allowed (16 MiB): refused from its size,
  // before a byte is read (a sparse file, so the test writes nothing).
  const std::string path = (scratch_dir() / "x.npy").string();
  test::write_file(path, "");
  fs::resize_file(path, 17 << 20);
  set_memory_limit(1000);
  const std::string msg = error_of([&] { read_npy(path); });
  set_memory_limit(0);
  EXPECT_THAT(msg, AllOf(HasSubstr(path), HasSubstr("more than the limit")));
}

const char* kPack = R"(schema_version: 1
plugin: mali
match:
  family: mali-valhall
engine_version: "*"
measured:
  how: "test"
  when: "2026-11-23"
  tool_version: "0.1.0"
entries: []
)";

TEST(YamlDuplicateKeys, PackWithARepeatedKeyIsRefused) {
  EXPECT_NO_THROW(parse_pack(kPack, "ok.yaml"));
  const std::string dup = std::string(kPack) + "plugin: cpu\n";
  EXPECT_THAT(error_of([&] { parse_pack(dup, "dup.yaml"); }),
              AllOf(HasSubstr("dup.yaml:11"), HasSubstr("duplicate key 'plugin'"),
                    HasSubstr("first given at line 2")));
  // A knob given twice (read by iterating its map) was silently accepted; now refused.
  std::string knobs = kPack;
  knobs.replace(knobs.find("entries: []"), std::string::npos,
                "entries:\n  - workload: \"relu|in=1x8|f32\"\n    schedule: relu.blocked\n"
                "    knobs: {block: 4, block: 8}\n    time_us: 3.5\n");
  EXPECT_THAT(error_of([&] { parse_pack(knobs, "knobs.yaml"); }),
              AllOf(HasSubstr("knobs.yaml:13:23"), HasSubstr("entries[0].knobs.block"),
                    HasSubstr("duplicate key 'block'")));
  // Nested maps too: two 'when' under measured.
  std::string nested = kPack;
  nested.replace(nested.find("  tool_version"), 0, "  when: \"2026-11-24\"\n");
  EXPECT_THAT(
      error_of([&] { parse_pack(nested, "nested.yaml"); }),
      AllOf(HasSubstr("nested.yaml:"), HasSubstr("measured"), HasSubstr("duplicate key 'when'")));
}

TEST(YamlDuplicateKeys, DeploymentWithARepeatedKeyIsRefused) {
  const std::string text =
      "schema_version: 1\nmodel: a.onnx\ntargets: [reference]\n"
      "targets: [cpu]\n";
  EXPECT_THAT(error_of([&] { parse_deploy_config(text, "app.yaml"); }),
              AllOf(HasSubstr("app.yaml:4"), HasSubstr("duplicate key 'targets'")));
}

TEST(PackWriting, APackThatWouldNotLoadIsNotSerialized) {
  Pack pack = parse_pack(kPack, "ok.yaml");
  PackEntry e;
  e.workload = "relu|in=1x8|f32";
  e.schedule = "relu.blocked";
  e.time_us = 12.5;
  pack.entries.push_back(e);
  const std::string text = serialize_validated_pack(pack, "out.yaml");
  EXPECT_EQ(parse_pack(text, "out.yaml").entries.at(0).time_us, 12.5);
  // A record a log could carry (no time measured) must not become a pack validate rejects.
  pack.entries[0].time_us = 0;
  EXPECT_THAT(error_of([&] { serialize_validated_pack(pack, "out.yaml"); }),
              AllOf(HasSubstr("'out.yaml' would not load"), HasSubstr("time_us")));
}

TEST(AppendLog, PartialLastLineGetsANewlineFirst) {
  const std::string path = (scratch_dir() / "tune.jsonl").string();
  tune::LogRecord r;
  r.workload = "relu|in=1x8|f32";
  r.plugin = "cpu";
  r.device = "x86";
  r.schedule = "relu.blocked";
  r.status = "ok";
  r.median_us = 3.5;
  const std::string line = tune::to_json_line(r);
  // A run killed mid-write leaves half a record without its newline.
  test::write_file(path, line + "\n" + line.substr(0, line.size() / 2));
  bool repaired = false;
  {
    AppendFile log(path, "tuning log", &repaired);
    log.append_line(line);
  }
  EXPECT_TRUE(repaired);
  EXPECT_EQ(read_file(path, "log", 1 << 20),
            line + "\n" + line.substr(0, line.size() / 2) + "\n" + line + "\n");
  // Both whole records read back; the partial one is skipped.
  const std::vector<tune::LogRecord> back = tune::read_log(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].median_us, 3.5);
  // A log that ends in a newline is left as it is.
  { AppendFile log(path, "tuning log", &repaired); }
  EXPECT_FALSE(repaired);
}

TEST(AppendLog, SymlinkInPlaceOfTheLogIsRefused) {
  const fs::path dir = scratch_dir();
  const std::string victim = (dir / "victim.txt").string();
  test::write_file(victim, "keep me\n");
  const std::string link = (dir / "tune.jsonl").string();
  fs::create_symlink(victim, link);
  EXPECT_THAT(error_of([&] { AppendFile log(link, "tuning log"); }),
              AllOf(HasSubstr(link), HasSubstr("symbolic link")));
  EXPECT_EQ(read_file(victim, "file", 100), "keep me\n");
}

TEST(AtomicWrite, TemporaryNameIsNotPredictable) {
  // write_npy formerly wrote "<path>.tmp.<pid>.<n>" with fopen, following a planted symlink.
  const fs::path dir = scratch_dir();
  const std::string out = (dir / "y.npy").string();
  const std::string victim = (dir / "victim.txt").string();
  test::write_file(victim, "keep me\n");
  fs::create_symlink(victim, out + ".tmp." + std::to_string(getpid()) + ".1");
  write_npy(out, Tensor::from_vector<float>({2}, {1.0f, 2.0f}), false);
  EXPECT_EQ(read_file(victim, "file", 100), "keep me\n");
  EXPECT_EQ(read_npy(out).to_float_vector(), (std::vector<float>{1.0f, 2.0f}));
}

}  // namespace
}  // namespace tessera
