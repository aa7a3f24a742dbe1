// Driver faults injected under the OpenCL plugins (mali: buffers, adreno: image2d) through the
// fault-injecting loader layer (layer/cl_fault_layer.h) in front of PoCL, driven through the
// Session API on a small Conv-Relu-MaxPool-Conv network:
//   - program build, buffer and image allocation and device loss while compiling: the region
//     falls back to the reference plugin with a warning naming the node(s) and the CL error (or,
//     with allow_fallback off, the session fails with that message);
//   - kernel launch failure and device loss while running: run() fails with an error naming the
//     plugin, the node (or the region's nodes) and the CL error;
// and in every case the OpenCL objects the plugin held are released (the layer's live counts
// return to what they were), and the next session or run in the same process, fault cleared,
// runs on the plugin and matches the reference kernels (tessera::run_reference, the oracle).
// Allocation, launch and device-loss faults are swept over every call of their class that a
// clean compile or run makes, so each unwinding path is taken once.
#include <gtest/gtest.h>

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>  // error codes only: the test reaches OpenCL through the plugins

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "../plugins/graph_builder.hpp"
#include "layer/cl_fault_layer.h"
#include "opencl_plugin_test_util.hpp"
#include "tessera/error.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"
#include "test_requirements.hpp"

namespace tessera {
namespace {

// The ICD loader reads OPENCL_LAYERS once, at its first call; libOpenCL is loaded only when the
// plugin host loads the OpenCL plugins, after this runs (the test does not link it).
const bool kLayerRequested = [] {
  setenv("OPENCL_LAYERS", CL_FAULT_LAYER_PATH, 1);
  return true;
}();

constexpr const char* kSuite = "opencl_faults";
constexpr int64_t kUntilReset = -1;
constexpr int32_t kDefaultError = 0;

// Live OpenCL objects per kind, as the layer counts them.
struct Live {
  std::array<int64_t, CL_FAULT_OBJ_KIND_COUNT> n{};

  static Live now() {
    Live l;
    for (int k = 0; k < CL_FAULT_OBJ_KIND_COUNT; ++k) {
      l.n[static_cast<size_t>(k)] = cl_fault_live(static_cast<cl_fault_object>(k));
    }
    return l;
  }
  int64_t operator[](cl_fault_object k) const { return n[static_cast<size_t>(k)]; }
  std::string str() const {
    std::string s;
    for (int k = 0; k < CL_FAULT_OBJ_KIND_COUNT; ++k) {
      s += std::string(s.empty() ? "" : ", ") +
           cl_fault_object_name(static_cast<cl_fault_object>(k)) + " " +
           std::to_string(n[static_cast<size_t>(k)]);
    }
    return s;
  }
  bool operator==(const Live& o) const { return n == o.n; }
};

std::ostream& operator<<(std::ostream& os, const Live& l) {
  return os << l.str();
}

// One plugin host for the whole process: the OpenCL plugins keep their per-device state in the
// library (one context and program pool per device and cache directory), so two hosts loading
// the same plugin would share it.
std::shared_ptr<const PluginHost> host() {
  return opencl_test::build_tree_host();
}

Graph small_network() {
  const Attributes pad1 = opencl_test::attrs({{"pads", opencl_test::Ints{1, 1, 1, 1}}});
  return test::GraphBuilder()
      .input("x", {1, 4, 8, 8})
      .constant("w1", opencl_test::random_tensor({8, 4, 3, 3}, 11))
      .constant("b1", opencl_test::random_tensor({8}, 12))
      .constant("w2", opencl_test::random_tensor({4, 8, 1, 1}, 13))
      .constant("b2", opencl_test::random_tensor({4}, 14))
      .node("Conv", {"x", "w1", "b1"}, {"c1"}, pad1, "conv1")
      .node("Relu", {"c1"}, {"r1"}, {}, "relu1")
      .node("MaxPool", {"r1"}, {"p1"}, opencl_test::pool_2x2_stride2(), "pool1")
      .node("Conv", {"p1", "w2", "b2"}, {"y"}, {}, "conv2")
      .output("y")
      .build();
}

class OpenClFaults : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    cl_fault_reset();
    plugin_ = GetParam();
    target_ = plugin_ + ":any";
    const auto loaded = host()->find(plugin_);
    ASSERT_TRUE(loaded) << "plugin '" << plugin_ << "' is not in the build tree's plugins/lib";
    bool usable = false;
    std::string reasons;
    for (const PluginDeviceInfo& d : loaded->probe("any")) {
      usable |= d.score > 0;
      reasons += d.name + ": " + d.unusable_reason + "\n";
    }
    if (!usable) {
      TESSERA_SKIP_WITHOUT("an OpenCL device (PoCL) usable by " + target_) << reasons;
    }
    ASSERT_EQ(cl_fault_layer_active(), 1)
        << "the ICD loader did not load the fault layer named in OPENCL_LAYERS ("
        << CL_FAULT_LAYER_PATH << "); ocl-icd >= 2.3 or the Khronos loader is needed";
    reference_ = run_reference(small_network(), inputs());
    // Warm: the kernel binaries of the default cache directory are on disk before the baseline
    // is taken. Each session's plugin instance owns its context, queue and program pool and
    // releases them with the session, so the baseline holds no OpenCL object at all.
    auto warm = session(options());
    expect_on_plugin(*warm);
    expect_matches_reference(warm->run(inputs()), "warm-up run");
    warm.reset();
    baseline_ = Live::now();
  }

  void TearDown() override { cl_fault_reset(); }

  std::map<std::string, Tensor> inputs() const {
    return {{"x", opencl_test::random_tensor({1, 4, 8, 8}, 7)}};
  }

  SessionOptions options() const {
    SessionOptions o = opencl_test::session_options({target_, "reference"}, kSuite);
    o.pack_mode = PackMode::kNone;
    o.allow_fallback = true;  // what these tests check: each fault moves the work on
    return o;
  }

  std::unique_ptr<Session> session(const SessionOptions& o) const {
    return std::make_unique<Session>(small_network(), o, host());
  }

  void expect_on_plugin(const Session& s) const {
    for (const NodePlacement& p : s.plan().nodes) {
      EXPECT_EQ(p.plugin, plugin_) << p.node << ": " << p.reason;
    }
  }

  void expect_on_reference(const Session& s) const {
    for (const NodePlacement& p : s.plan().nodes) {
      EXPECT_EQ(p.plugin, "reference") << p.node << ": " << p.reason;
    }
  }

  void expect_matches_reference(const std::vector<Tensor>& got, const std::string& what) const {
    SCOPED_TRACE(what);
    ASSERT_EQ(got.size(), reference_.size());
    ASSERT_EQ(got[0].shape(), reference_[0].shape());
    opencl_test::expect_all_near(got[0], reference_[0], 1e-4f);
  }

  // The fallback warning of a compile that failed on the plugin: it names the plugin's target,
  // the node(s) and `error`.
  void expect_fallback_warning(const Session& s, const std::string& error) const {
    std::string all;
    bool found = false;
    for (const std::string& w : s.plan().warnings) {
      all += w + "\n";
      found |= w.find("failed to compile on " + target_) != std::string::npos &&
               w.find("conv1") != std::string::npos && w.find(error) != std::string::npos &&
               (w.find("node '") != std::string::npos ||
                w.find("binding the region's inputs and outputs") != std::string::npos);
    }
    EXPECT_TRUE(found) << "no fallback warning naming " << target_ << ", the node and " << error
                       << " among:\n"
                       << all;
  }

  // run() fails with an error naming the plugin, a node and `error`; returns whether it failed.
  bool expect_run_fails(Session& s, const std::string& error, const std::string& what) const {
    SCOPED_TRACE(what);
    try {
      s.run(inputs());
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("plugin '" + plugin_ + "'"), std::string::npos) << m;
      EXPECT_NE(m.find("node '"), std::string::npos) << m;
      EXPECT_NE(m.find(error), std::string::npos) << m;
      return true;
    }
    return false;
  }

  // Fault class `c` armed to fail the k-th call of every clean compile, for each k: the region
  // falls back with a warning naming the node and the error, nothing is left once the session
  // (and with it the plugin instance, its context and program pool) is gone, and the next clean
  // session compiles on the plugin again.
  void sweep_compile_fault(cl_fault_class c, const std::vector<std::string>& errors,
                           const std::vector<int32_t>& codes, int64_t times) {
    cl_fault_reset();
    auto clean = session(options());
    expect_on_plugin(*clean);
    // Counted before the session goes: releasing its instance drains the queue, calls that no
    // compile makes.
    const int64_t calls = cl_fault_calls(c);
    clean.reset();
    ASSERT_GT(calls, 0) << "a clean compile on " << target_ << " makes no call of this class";
    std::printf("  %s: %lld calls of the class per clean compile, each failed in turn\n",
                target_.c_str(), static_cast<long long>(calls));
    for (int64_t k = 0; k < calls; ++k) {
      SCOPED_TRACE("failing call " + std::to_string(k) + " of " + std::to_string(calls));
      const size_t e = static_cast<size_t>(k) % errors.size();
      cl_fault_arm(c, k, times, codes[e]);
      auto s = session(options());
      EXPECT_GT(cl_fault_injected(c), 0);
      expect_fallback_warning(*s, errors[e]);
      expect_on_reference(*s);
      expect_matches_reference(s->run(inputs()), "the fallback's run");
      s.reset();
      EXPECT_EQ(Live::now(), baseline_) << "OpenCL objects left behind by the failed compile";
      cl_fault_reset();
      auto next = session(options());
      expect_on_plugin(*next);
      expect_matches_reference(next->run(inputs()), "the next session, fault cleared");
      next.reset();
      EXPECT_EQ(Live::now(), baseline_);
    }
  }

  std::string plugin_;
  std::string target_;
  std::vector<Tensor> reference_;
  Live baseline_;
};

// Every program build fails (the binary cache's too): with allow_fallback off the session fails
// naming the node and CL_BUILD_PROGRAM_FAILURE; with it on, the network runs on the reference
// plugin; every failed cl_program is released; once the fault is cleared a session compiles on
// the plugin. A cache directory of its own gives the plugin an empty program pool, so the
// builds happen (the pool of the default directory already holds every program).
TEST_P(OpenClFaults, ProgramBuildFailureFallsBackAndNextSessionCompiles) {
  static int round = 0;  // a new directory (and pool) when the test repeats in one process
  SessionOptions o = options();
  o.cache_dir = std::string(TESSERA_BINARY_DIR) + "/tests/" + kSuite + "/kernel-cache-build-" +
                plugin_ + "-" + std::to_string(round++);
  cl_fault_arm(CL_FAULT_BUILD_PROGRAM, 0, kUntilReset, kDefaultError);

  SessionOptions strict = o;
  strict.allow_fallback = false;
  try {
    session(strict);
    ADD_FAILURE() << "the session compiled although every build failed";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("failed to compile on " + target_), std::string::npos) << m;
    EXPECT_NE(m.find("node 'conv1' (Conv)"), std::string::npos) << m;
    EXPECT_NE(m.find("CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << m;
  }
  // The failed session took its plugin instance (context, queue, pool) with it.
  const Live after_strict = Live::now();
  EXPECT_EQ(after_strict, baseline_) << "OpenCL objects left behind by the failed session";

  auto s = session(o);
  EXPECT_GT(cl_fault_injected(CL_FAULT_BUILD_PROGRAM), 0);
  expect_fallback_warning(*s, "CL_BUILD_PROGRAM_FAILURE");
  expect_on_reference(*s);
  expect_matches_reference(s->run(inputs()), "the fallback's run");
  s.reset();
  EXPECT_EQ(Live::now(), after_strict);

  cl_fault_reset();
  auto next = session(o);
  expect_on_plugin(*next);
  expect_matches_reference(next->run(inputs()), "the next session, fault cleared");
}

// Each clCreateBuffer of a clean compile, failed in turn (CL_MEM_OBJECT_ALLOCATION_FAILURE and
// CL_OUT_OF_RESOURCES alternately).
TEST_P(OpenClFaults, BufferAllocationFailureFallsBackAtEveryAllocation) {
  sweep_compile_fault(CL_FAULT_CREATE_BUFFER,
                      {"CL_MEM_OBJECT_ALLOCATION_FAILURE", "CL_OUT_OF_RESOURCES"},
                      {CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES}, 1);
}

// The device stops answering at each queue call of a clean compile (constant uploads, the final
// finish), and stays lost: the region falls back.
TEST_P(OpenClFaults, DeviceLostWhileCompilingFallsBackAtEveryQueueCall) {
  sweep_compile_fault(CL_FAULT_DEVICE_LOST, {"CL_DEVICE_NOT_AVAILABLE", "CL_OUT_OF_RESOURCES"},
                      {CL_DEVICE_NOT_AVAILABLE, CL_OUT_OF_RESOURCES}, kUntilReset);
}

// Each kernel launch of a clean run, failed once with CL_OUT_OF_RESOURCES: run() fails naming the
// node and the error, the session keeps exactly what it held, and the next run succeeds.
TEST_P(OpenClFaults, KernelLaunchFailureFailsRunAndNextRunSucceeds) {
  auto s = session(options());
  expect_on_plugin(*s);
  cl_fault_reset();
  expect_matches_reference(s->run(inputs()), "a clean run");
  const int64_t launches = cl_fault_calls(CL_FAULT_ENQUEUE_KERNEL);
  ASSERT_GT(launches, 0);
  const Live held = Live::now();
  std::printf("  %s: %lld launches per run, each failed in turn; held: %s\n", target_.c_str(),
              static_cast<long long>(launches), held.str().c_str());
  for (int64_t k = 0; k < launches; ++k) {
    SCOPED_TRACE("failing launch " + std::to_string(k) + " of " + std::to_string(launches));
    cl_fault_arm(CL_FAULT_ENQUEUE_KERNEL, k, 1, CL_OUT_OF_RESOURCES);
    EXPECT_TRUE(expect_run_fails(*s, "CL_OUT_OF_RESOURCES", "the faulted run"))
        << "run() succeeded although a launch failed";
    EXPECT_EQ(cl_fault_injected(CL_FAULT_ENQUEUE_KERNEL), 1);
    EXPECT_EQ(Live::now(), held) << "OpenCL objects left behind by the failed run";
    expect_matches_reference(s->run(inputs()), "the next run");
    cl_fault_reset();
  }
  s.reset();
  EXPECT_EQ(Live::now(), baseline_);
}

// The device is lost from the k-th queue call of a run on (writes, launches, reads, finish, the
// profiling waits), for every k: run() either fails naming the node(s) and the error, or (lost
// only after the outputs were read) returns the right values; while it stays lost every run
// fails the same way without hanging; after the reset the next run succeeds.
TEST_P(OpenClFaults, DeviceLostMidRunFailsRunsUntilResetThenRecovers) {
  auto s = session(options());
  expect_on_plugin(*s);
  cl_fault_reset();
  expect_matches_reference(s->run(inputs()), "a clean run");
  const int64_t calls = cl_fault_calls(CL_FAULT_DEVICE_LOST);
  const int64_t launches = cl_fault_calls(CL_FAULT_ENQUEUE_KERNEL);
  ASSERT_GT(calls, launches);
  const Live held = Live::now();
  int64_t failed_runs = 0;
  for (int64_t k = 0; k < calls; ++k) {
    SCOPED_TRACE("device lost from queue call " + std::to_string(k) + " of " +
                 std::to_string(calls));
    const bool odd = k % 2 != 0;
    const std::string error = odd ? "CL_OUT_OF_RESOURCES" : "CL_DEVICE_NOT_AVAILABLE";
    cl_fault_arm(CL_FAULT_DEVICE_LOST, k, kUntilReset,
                 odd ? CL_OUT_OF_RESOURCES : CL_DEVICE_NOT_AVAILABLE);
    std::vector<Tensor> got;
    bool failed = false;
    try {
      got = s->run(inputs());
    } catch (const Error&) {
      failed = true;
    }
    if (failed) {
      ++failed_runs;
    } else {
      expect_matches_reference(got, "a run whose device was lost after its outputs were read");
    }
    EXPECT_TRUE(expect_run_fails(*s, error, "a run while the device stays lost"))
        << "run() succeeded on a lost device";
    EXPECT_EQ(Live::now(), held) << "OpenCL objects left behind by the failed runs";
    cl_fault_reset();
    expect_matches_reference(s->run(inputs()), "the next run, device back");
  }
  std::printf("  %s: device lost from each of %lld queue calls per run: %lld runs failed\n",
              target_.c_str(), static_cast<long long>(calls), static_cast<long long>(failed_runs));
  // Only the calls after the outputs were read (the profiling waits) may fail silently.
  EXPECT_GE(failed_runs, launches + 2) << "of " << calls << " queue calls per run";
  s.reset();
  EXPECT_EQ(Live::now(), baseline_);
}

INSTANTIATE_TEST_SUITE_P(Plugins, OpenClFaults, ::testing::Values("mali", "adreno"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// adreno keeps activations in image2d textures: each clCreateImage of a clean compile, failed
// in turn, falls back the same way.
class AdrenoImageFaults : public OpenClFaults {};

TEST_P(AdrenoImageFaults, ImageAllocationFailureFallsBackAtEveryAllocation) {
  sweep_compile_fault(CL_FAULT_CREATE_IMAGE,
                      {"CL_MEM_OBJECT_ALLOCATION_FAILURE", "CL_OUT_OF_RESOURCES"},
                      {CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES}, 1);
}

INSTANTIATE_TEST_SUITE_P(Plugins, AdrenoImageFaults, ::testing::Values("adreno"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tessera
