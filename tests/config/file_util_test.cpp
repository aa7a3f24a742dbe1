// Atomic writes: content lands whole, an existing file is kept unless overwrite, and a failed
// write leaves neither a partial target nor a stray temporary file.
#include "tessera/file_util.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>

#include "config_test_util.hpp"

namespace tessera {
namespace {

using testing::error_of;
using ::testing::HasSubstr;

size_t entries_in(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(WriteFileAtomic, WritesAndReplacesOnlyWithOverwrite) {
  testing::ScratchDir dir;
  const std::string path = dir.file("out.txt");
  std::string big(3 << 20, 'x');
  big[12345] = 'y';
  write_file_atomic(path, big, false);
  EXPECT_EQ(read_file(path, "file", kMaxYamlFileBytes), big);
  const std::string msg = error_of([&] { write_file_atomic(path, "new", false); });
  EXPECT_EQ(msg, "output file '" + path +
                     "' already exists; pass `overwrite` to replace it (nothing was written)");
  EXPECT_EQ(read_file(path, "file", kMaxYamlFileBytes), big);
  write_file_atomic(path, "new", true);
  EXPECT_EQ(read_file(path, "file", kMaxYamlFileBytes), "new");
  EXPECT_EQ(entries_in(dir.path()), 1u);  // no temporary left behind
}

TEST(WriteFileAtomic, FailureLeavesNoPartialFile) {
  testing::ScratchDir dir;
  // The target is a directory: the temp file is written, then the replace must fail.
  std::filesystem::create_directories(dir.file("target"));
  EXPECT_THAT(error_of([&] { write_file_atomic(dir.file("target"), "data", true); }),
              HasSubstr("is a directory"));
  // An unwritable directory: nothing can be created, nothing is left.
  const std::string ro = dir.file("ro");
  std::filesystem::create_directories(ro);
  ::chmod(ro.c_str(), 0500);
  if (::geteuid() != 0) {
    EXPECT_THAT(error_of([&] { write_file_atomic(ro + "/x.yaml", "data", false); }),
                HasSubstr("cannot create a temporary file beside '" + ro + "/x.yaml'"));
    EXPECT_EQ(entries_in(ro), 0u);
  }
  ::chmod(ro.c_str(), 0700);
  // Missing parent directory.
  EXPECT_THAT(error_of([&] { write_file_atomic(dir.file("no/such/dir/f"), "d", false); }),
              HasSubstr("cannot create a temporary file"));
  EXPECT_EQ(entries_in(dir.path()), 2u);  // target/ and ro/ only
}

TEST(WriteFileAtomic, WriteFailingHalfwayKeepsTheOldFileWhole) {
  testing::ScratchDir dir;
  const std::string path = dir.file("pack.yaml");
  write_file_atomic(path, "old contents\n", false);
  // Make the kernel refuse writes past 64 KiB (EFBIG), so the new content fails part-way.
  rlimit old_limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit small = old_limit;
  small.rlim_cur = 64 * 1024;
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string msg =
      error_of([&] { write_file_atomic(path, std::string(1 << 20, 'n'), true); });
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_THAT(msg, HasSubstr("(for '" + path + "')"));
  EXPECT_EQ(read_file(path, "file", kMaxYamlFileBytes), "old contents\n");
  EXPECT_EQ(entries_in(dir.path()), 1u);  // the partial temporary was removed
}

TEST(ReadFile, MissingFileNamed) {
  EXPECT_THAT(error_of([] { read_file("/no/such/file.yaml", "file", kMaxYamlFileBytes); }),
              HasSubstr("cannot open '/no/such/file.yaml'"));
}

}  // namespace
}  // namespace tessera
