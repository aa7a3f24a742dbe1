// tessera_opencl runtime on whatever OpenCL device exists (PoCL in CI): probing, build errors
// carrying the build log, the binary cache (hit, corrupt file rebuilt, a FIFO or a directory in
// an entry's place ignored without blocking), typed kernel arguments.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "fifo_watchdog.hpp"
#include "tessera_opencl/runtime.hpp"
#include "test_requirements.hpp"

namespace tessera::opencl {
namespace {

const char* kScaleSource = R"CL(
__kernel void scale(__global const float* x, __global float* y, int n, float s) {
  const int i = get_global_id(0);
  if (i < n) y[i] = x[i] * s;
}
)CL";

class OpenClRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ProbeResult probe = probe_devices();
    if (probe.devices.empty()) TESSERA_SKIP_WITHOUT("an OpenCL device") << probe.error;
    device_ = probe.devices.front();
    cache_dir_ = std::filesystem::temp_directory_path() /
                 ("tessera-opencl-test-" + std::to_string(::getpid()) + "-" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(cache_dir_);
  }
  void TearDown() override {
    if (!cache_dir_.empty()) std::filesystem::remove_all(cache_dir_);
  }

  // Runs `scale` from `program` on 5 values; the oracle is x * 2.5.
  void expect_scale_works(Context& ctx, const Program& program) {
    Kernel k = program.kernel("scale");
    const std::vector<float> x = {1, -2, 3.5f, 0, 8};
    std::vector<float> y(x.size(), 0.0f);
    Buffer xb(ctx, x.size() * 4), yb(ctx, y.size() * 4);
    ctx.write(xb, x.data(), x.size() * 4);
    k.args().buffer(xb).buffer(yb).i32(5).f32(2.5f);
    Event e = ctx.launch(k, {5}, {});
    ctx.read(yb, y.data(), y.size() * 4);
    EXPECT_GE(e.duration_us(), 0.0);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(y[i], x[i] * 2.5f);
  }

  DeviceInfo device_;
  std::filesystem::path cache_dir_;
};

TEST(OpenClErrors, NamesKnownAndUnknownCodes) {
  EXPECT_EQ(cl_error_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  EXPECT_EQ(cl_error_name(CL_INVALID_WORK_GROUP_SIZE), "CL_INVALID_WORK_GROUP_SIZE");
  EXPECT_EQ(cl_error_name(-9999), "CL_UNKNOWN_ERROR(-9999)");
}

TEST_F(OpenClRuntimeTest, ProbeReportsDeviceProperties) {
  ProbeResult probe = probe_devices();
  bool pocl = false;
  for (const DeviceInfo& d : probe.devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.compute_units, 0);
    EXPECT_GT(d.max_work_group_size, 0);
    EXPECT_GT(d.global_memory_bytes, 0);
    EXPECT_EQ(d.fp16, d.has_extension("cl_khr_fp16"));
    pocl |= d.platform_name.find("Portable Computing Language") != std::string::npos;
  }
  // clinfo -l lists PoCL on the CI machines; other machines need not have it.
  if (!pocl) TESSERA_SKIP_WITHOUT("PoCL") << "clinfo -l lists no Portable Computing Language platform";
  SUCCEED();
}

TEST_F(OpenClRuntimeTest, BadSourceErrorCarriesBuildLogAndDevice) {
  Context ctx(device_, "");
  const std::string bad =
      "__kernel void broken(__global float* x) { x[0] = tsr_undefined_symbol_42; }";
  try {
    ctx.build("broken.cl", bad, "");
    FAIL() << "the build should have failed";
  } catch (const ClError& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(e.is_build_failure()) << msg;
    EXPECT_NE(msg.find("broken.cl"), std::string::npos) << msg;
    EXPECT_NE(msg.find(device_.name), std::string::npos) << msg;
    EXPECT_NE(msg.find("CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << msg;
    EXPECT_NE(msg.find("tsr_undefined_symbol_42"), std::string::npos) << "no build log: " << msg;
  }
}

TEST_F(OpenClRuntimeTest, SecondBuildLoadsBinaryFromCache) {
  {
    Context first(device_, cache_dir_.string());
    Program p = first.build("scale.cl", kScaleSource, "-DTSR_CACHE_TEST=1");
    EXPECT_FALSE(p.loaded_from_cache());
    EXPECT_EQ(first.cache_stats().source_builds, 1);
    EXPECT_EQ(first.cache_stats().writes, 1);
    expect_scale_works(first, p);
  }
  ASSERT_TRUE(std::filesystem::exists(
      Context(device_, cache_dir_.string()).cache_path(kScaleSource, "-DTSR_CACHE_TEST=1")));
  Context second(device_, cache_dir_.string());
  Program p = second.build("scale.cl", kScaleSource, "-DTSR_CACHE_TEST=1");
  EXPECT_TRUE(p.loaded_from_cache());
  EXPECT_EQ(second.cache_stats().binary_loads, 1);
  EXPECT_EQ(second.cache_stats().source_builds, 0);
  expect_scale_works(second, p);
  // Other options are another cache entry.
  Program other = second.build("scale.cl", kScaleSource, "-DTSR_CACHE_TEST=2");
  EXPECT_FALSE(other.loaded_from_cache());
}

TEST_F(OpenClRuntimeTest, CorruptCacheFileIsDetectedAndRebuilt) {
  std::string path;
  {
    Context first(device_, cache_dir_.string());
    first.build("scale.cl", kScaleSource, "");
    path = first.cache_path(kScaleSource, "");
  }
  // Flip bytes in the middle of the binary payload.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good());
    f.seekg(0, std::ios::end);
    const auto size = static_cast<std::streamoff>(f.tellg());
    f.seekp(size / 2);
    const char garbage[16] = {'\x13', '\x37', '\x00', '\xff', '\x42', '\x42', '\x42', '\x42',
                              '\x42', '\x42', '\x42', '\x42', '\x42', '\x42', '\x42', '\x42'};
    f.write(garbage, sizeof(garbage));
  }
  {
    Context second(device_, cache_dir_.string());
    Program p = second.build("scale.cl", kScaleSource, "");
    EXPECT_FALSE(p.loaded_from_cache());
    EXPECT_EQ(second.cache_stats().rejected_binaries, 1);
    EXPECT_EQ(second.cache_stats().source_builds, 1);
    EXPECT_EQ(second.cache_stats().writes, 1);
    expect_scale_works(second, p);
  }
  // A truncated file is rejected too; the rebuilt one then loads.
  std::filesystem::resize_file(path, 20);
  {
    Context third(device_, cache_dir_.string());
    EXPECT_FALSE(third.build("scale.cl", kScaleSource, "").loaded_from_cache());
    EXPECT_EQ(third.cache_stats().rejected_binaries, 1);
  }
  Context fourth(device_, cache_dir_.string());
  Program p = fourth.build("scale.cl", kScaleSource, "");
  EXPECT_TRUE(p.loaded_from_cache());
  expect_scale_works(fourth, p);
}

// A cache entry replaced by a FIFO made every build block forever opening it. It is now left
// unopened and the program built from source; the watchdog (fifo_watchdog.hpp) shows whether
// anything opened the FIFO to read it, and releases a reader blocked there.
TEST_F(OpenClRuntimeTest, FifoInPlaceOfACacheEntryIsIgnoredWithoutBlocking) {
  const std::string path = Context(device_, cache_dir_.string()).cache_path(kScaleSource, "");
  std::filesystem::create_directories(cache_dir_);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::optional<Context> second;
  std::optional<Program> p;
  bool fifo_was_read = false;
  {
    tessera_test::FifoReadWatchdog watchdog(path);
    second.emplace(device_, cache_dir_.string());
    p.emplace(second->build("scale.cl", kScaleSource, ""));
    fifo_was_read = watchdog.stop();
  }
  EXPECT_FALSE(fifo_was_read) << "the build opened the FIFO at " << path << " to read it";
  EXPECT_FALSE(p->loaded_from_cache());
  EXPECT_EQ(second->cache_stats().ignored_entries, 1);
  EXPECT_EQ(second->cache_stats().rejected_binaries, 0);
  EXPECT_EQ(second->cache_stats().source_builds, 1);
  expect_scale_works(*second, *p);
  p.reset();
  second.reset();
  // The build's entry took the FIFO's place; the next context loads it.
  EXPECT_TRUE(std::filesystem::is_regular_file(path));
  Context third(device_, cache_dir_.string());
  Program cached = third.build("scale.cl", kScaleSource, "");
  EXPECT_TRUE(cached.loaded_from_cache());
  EXPECT_EQ(third.cache_stats().ignored_entries, 0);
  expect_scale_works(third, cached);
}

TEST_F(OpenClRuntimeTest, DirectoryInPlaceOfACacheEntryIsIgnored) {
  const std::string path = Context(device_, cache_dir_.string()).cache_path(kScaleSource, "");
  std::filesystem::create_directories(path);
  Context ctx(device_, cache_dir_.string());
  Program p = ctx.build("scale.cl", kScaleSource, "");
  EXPECT_FALSE(p.loaded_from_cache());
  EXPECT_EQ(ctx.cache_stats().ignored_entries, 1);
  EXPECT_EQ(ctx.cache_stats().source_builds, 1);
  EXPECT_EQ(ctx.cache_stats().writes, 0);  // a file cannot be renamed over the directory
  EXPECT_TRUE(std::filesystem::is_directory(path));
  expect_scale_works(ctx, p);
}

TEST_F(OpenClRuntimeTest, WrongArgumentNamesKernelAndError) {
  Context ctx(device_, cache_dir_.string());
  Program p = ctx.build("scale.cl", kScaleSource, "");
  Kernel k = p.kernel("scale");
  Buffer b(ctx, 16);
  try {
    k.args().buffer(b).buffer(b).i32(1).f32(1.0f).i32(7);  // one argument too many
    FAIL() << "binding a fifth argument should fail";
  } catch (const ClError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("kernel 'scale'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("argument 4"), std::string::npos) << msg;
    EXPECT_NE(msg.find("CL_INVALID_ARG_INDEX"), std::string::npos) << msg;
  }
  try {
    p.kernel("no_such_kernel");
    FAIL();
  } catch (const ClError& e) {
    EXPECT_NE(std::string(e.what()).find("CL_INVALID_KERNEL_NAME"), std::string::npos);
  }
}

}  // namespace
}  // namespace tessera::opencl
