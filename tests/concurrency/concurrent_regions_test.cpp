// Independent regions of one run on different plugins execute at once, and the run counters
// (Session::last_run_stats) say what crossed host<->device and how far regions overlapped.
//
// Overlap: two independent regions on the test plugins halfref and islandgpu each wait, in every
// run, until the other has started (their `rendezvous` option), so the run passes only if the
// executor ran them at once, whatever the machine's speed. A graph of two branches reading one
// input, one on cpu and one on a plugin the cpu refuses its ops to (reference, or mali on PoCL),
// then runs with every output matching the reference runner's and the run counters (regions in
// flight, overlap) agreeing with the profile, whether or not a run happened to overlap. Buffers:
// regions that may run at once never share a boundary buffer. Counters: a model on the "gpu" test
// plugin islandgpu (or on mali) counts exactly its regions' inputs' and outputs' bytes; on cpu, 0.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "concurrency_test_util.hpp"
#include "graph_builder.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"
#include "test_requirements.hpp"

namespace tessera {
namespace {

using concurrency_test::options_for;

// Runs of the cpu + reference / mali branches checked; a run's second region starts on a oneTBB
// worker, which may wake late or early, so a run may or may not overlap.
constexpr int kOverlapTries = 20;

// x -> conv -> relu (cpu) beside x -> pool -> pool (what cpu refuses), both outputs returned.
Graph two_branches() {
  return test::GraphBuilder()
      .input("x", {1, 16, 48, 48})
      .constant("w", test::random_tensor({16, 16, 3, 3}, 3))
      .node("Conv", {"x", "w"}, {"c"}, concurrency_test::conv_3x3_same(), "conv")
      .node("Relu", {"c"}, {"r"}, {}, "relu")
      .node("MaxPool", {"x"}, {"p1"}, concurrency_test::pool_cpu_refuses(), "pool1")
      .node("MaxPool", {"p1"}, {"p2"}, concurrency_test::pool_cpu_refuses(), "pool2")
      .output("r")
      .output("p2")
      .build();
}

// The cpu plugin gets one thread so that its region needs no oneTBB worker: on a 2-core machine
// oneTBB has one, and the other region's task needs it.
SessionOptions two_branch_options(const std::string& other_target) {
  SessionOptions options = options_for({"cpu", other_target}, 1);
  options.cache_dir = std::string(TESSERA_BINARY_DIR) + "/tests/concurrency/kernel-cache";
  return options;
}

// Runs `session` kOverlapTries times (fewer once a run overlapped); every run's outputs must match
// the oracle and its counters the profile.
void expect_regions_overlap(Session& session, const Graph& graph, const std::string& other_plugin) {
  ASSERT_EQ(session.plan().regions.size(), 2u);
  EXPECT_EQ(session.plan().regions[0].plugin, "cpu");
  EXPECT_EQ(session.plan().regions[1].plugin, other_plugin);
  const std::map<std::string, Tensor> inputs = test::random_inputs(graph, 17);
  const std::vector<Tensor> want = run_reference(graph, inputs);
  bool overlapped = false;
  for (int run = 0; run < kOverlapTries && !overlapped; ++run) {
    const std::string diff = first_mismatch(session.run(inputs), want);
    ASSERT_EQ(diff, "") << "run " << run;
    const std::vector<RegionProfile> profile = session.profile();
    ASSERT_EQ(profile.size(), 2u);
    const double start = std::max(profile[0].start_us, profile[1].start_us);
    const double end = std::min(profile[0].start_us + profile[0].time_us,
                                profile[1].start_us + profile[1].time_us);
    const RunStats stats = session.last_run_stats();
    overlapped = end > start;
    EXPECT_EQ(stats.max_regions_in_flight, overlapped ? 2 : 1) << "run " << run;
    EXPECT_NEAR(stats.overlap_us, overlapped ? end - start : 0.0, 1e-6) << "run " << run;
  }
}

TEST(ConcurrentRegions, IndependentRegionsRunAtOnce) {
  if (std::thread::hardware_concurrency() < 2) {
    TESSERA_SKIP_WITHOUT("two hardware threads") << "one run executes one region at a time";
  }
  std::string dir = std::string(TESSERA_BINARY_DIR) + "/tests/concurrency/rendezvous-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr) << dir;
  // add: only halfref runs Add; relu: islandgpu comes first in the targets.
  const Graph graph = test::GraphBuilder()
                          .input("x", {1, 8, 16, 16})
                          .node("Add", {"x", "x"}, {"s"}, {}, "add")
                          .node("Relu", {"x"}, {"r"}, {}, "relu")
                          .output("s")
                          .output("r")
                          .build();
  SessionOptions options = options_for({"islandgpu", "halfref"}, 1);
  for (const char* target : {"islandgpu", "halfref"}) {
    options.target_settings[target].options = {{"rendezvous", dir}};
  }
  options.plugin_dirs = {TESSERA_TEST_PLUGIN_GOOD_DIR, concurrency_test::build_plugin_dir()};
  Session session(graph, options);
  std::string plugins;
  for (const RegionPlacement& r : session.plan().regions) plugins += r.plugin + " ";
  ASSERT_EQ(session.plan().regions.size(), 2u) << plugins;
  // Each region waits in its run until the other has started: a sequential executor fails here.
  const std::map<std::string, Tensor> inputs = test::random_inputs(graph, 5);
  EXPECT_EQ(first_mismatch(session.run(inputs), run_reference(graph, inputs)), "");
  EXPECT_EQ(session.last_run_stats().max_regions_in_flight, 2);
  std::filesystem::remove_all(dir);
}

TEST(ConcurrentRegions, CpuAndReferenceBranchesRunAtOnce) {
  if (std::thread::hardware_concurrency() < 2) {
    TESSERA_SKIP_WITHOUT("two hardware threads") << "one run executes one region at a time";
  }
  const Graph graph = two_branches();
  Session session(graph, two_branch_options("reference"));
  expect_regions_overlap(session, graph, "reference");
}

// Regions in step order: conv_a (cpu) -> a; pool_q (reference) x -> q; pool_a (reference)
// a -> pa; conv_s (cpu) q -> b; pool_b (reference) b -> pb. conv_s waits for pool_q and conv_a
// only, so it runs beside pool_a, which still reads a: b must not take a's buffer, although by
// step order alone pool_a is done before conv_s. pb may take a buffer again (pool_b runs after
// every other region). So the plan holds a, q, b and pa apart, and every run matches the oracle.
TEST(ConcurrentRegions, RegionsThatMayRunAtOnceShareNoBuffer) {
  Attributes shrink = concurrency_test::pool_cpu_refuses();
  shrink.set("kernel_shape", std::vector<int64_t>{8, 8});
  shrink.set("strides", std::vector<int64_t>{8, 8});
  shrink.set("pads", std::vector<int64_t>{0, 0, 0, 0});
  const Attributes same = concurrency_test::conv_3x3_same();
  const Graph graph =
      test::GraphBuilder()
          .input("x", {1, 8, 32, 32})
          .constant("w", test::random_tensor({8, 8, 3, 3}, 4))
          .node("Conv", {"x", "w"}, {"a"}, same, "conv_a")
          .node("MaxPool", {"x"}, {"q"}, concurrency_test::pool_cpu_refuses(), "pool_q")
          .node("MaxPool", {"a"}, {"pa"}, shrink, "pool_a")
          .node("Conv", {"q", "w"}, {"b"}, same, "conv_s")
          .node("MaxPool", {"b"}, {"pb"}, shrink, "pool_b")
          .output("pa")
          .output("pb")
          .build();
  Session session(graph, two_branch_options("reference"));
  std::string regions;
  for (const RegionPlacement& r : session.plan().regions) regions += r.nodes.at(0) + " ";
  ASSERT_EQ(regions, "conv_a pool_q pool_a conv_s pool_b ");
  const size_t full_bytes = 8 * 32 * 32 * 4, pooled_bytes = 8 * 4 * 4 * 4;
  EXPECT_EQ(session.plan().buffers, 4);
  EXPECT_EQ(session.plan().buffer_bytes, 3 * full_bytes + pooled_bytes);
  const std::map<std::string, Tensor> inputs = test::random_inputs(graph, 8);
  const std::vector<Tensor> want = run_reference(graph, inputs);
  for (int run = 0; run < 10; ++run)
    ASSERT_EQ(first_mismatch(session.run(inputs), want), "") << run;
}

#ifdef TESSERA_TEST_MALI_BUILT
// "" when the build tree's mali plugin has a usable device for "mali:any", else why not.
std::string mali_unusable() {
  const std::shared_ptr<const PluginHost> host = concurrency_test::build_tree_host();
  const std::shared_ptr<LoadedPlugin> mali = host->find("mali");
  if (!mali) return "the mali plugin was not loaded from " + concurrency_test::build_plugin_dir();
  std::string reasons;
  for (const PluginDeviceInfo& d : mali->probe("any")) {
    if (d.score > 0) return "";
    reasons += " " + d.unusable_reason;
  }
  return "mali:any found no usable OpenCL device:" + reasons;
}

// Skips the test (returning from it) unless mali:any can run: a tree built without OpenCL skips
// quietly; a missing device is a requirement (a failure in CI).
#define SKIP_UNLESS_MALI_RUNS()                              \
  if (const std::string why = mali_unusable(); !why.empty()) \
  TESSERA_SKIP_WITHOUT("an OpenCL device (PoCL)") << why
#else
#define SKIP_UNLESS_MALI_RUNS() GTEST_SKIP() << "this tree builds no mali plugin (OpenCL off)"
#endif

TEST(ConcurrentRegions, CpuAndMaliBranchesRunAtOnce) {
  if (std::thread::hardware_concurrency() < 2) {
    TESSERA_SKIP_WITHOUT("two hardware threads") << "one run executes one region at a time";
  }
  SKIP_UNLESS_MALI_RUNS();
  const Graph graph = two_branches();
  Session session(graph, two_branch_options("mali:any"));
  expect_regions_overlap(session, graph, "mali");
}

// x -> relu1 -> sigmoid -> relu2: islandgpu (a "gpu" test plugin) runs only Relu, so with
// reference behind it the chain is three regions, the first and last on the "gpu".
Graph relu_sigmoid_relu() {
  return test::GraphBuilder()
      .input("x", {1, 8, 32, 32})
      .node("Relu", {"x"}, {"a"}, {}, "relu1")
      .node("Sigmoid", {"a"}, {"b"}, {}, "sigmoid")
      .node("Relu", {"b"}, {"y"}, {}, "relu2")
      .output("y")
      .build();
}

// Runs `graph` once on `options`, checks the outputs against the oracle and the plan's plugins,
// and returns the run's counters.
RunStats counters_of_one_run(const Graph& graph, const SessionOptions& options,
                             const std::string& region_plugins) {
  Session session(graph, options);
  std::string plugins;
  for (const RegionPlacement& r : session.plan().regions) plugins += r.plugin + " ";
  EXPECT_EQ(plugins, region_plugins);
  const std::map<std::string, Tensor> inputs = test::random_inputs(graph, 5);
  EXPECT_EQ(first_mismatch(session.run(inputs), run_reference(graph, inputs)), "");
  const RunStats stats = session.last_run_stats();
  // Each plan here is a chain of regions: one at a time.
  EXPECT_EQ(stats.max_regions_in_flight, 1);
  EXPECT_EQ(stats.overlap_us, 0.0);
  return stats;
}

constexpr int64_t kReluBytes = 8 * 32 * 32 * 4;  // each value of relu_sigmoid_relu()

SessionOptions islandgpu_options(std::vector<std::string> targets) {
  SessionOptions options = options_for(std::move(targets), 1);
  options.plugin_dirs = {TESSERA_TEST_PLUGIN_GOOD_DIR, concurrency_test::build_plugin_dir()};
  return options;
}

TEST(RunStats, GpuRegionsCountTheirInputsAndOutputs) {
  // x and a cross into and out of relu1, b and y into and out of relu2; sigmoid's region is on
  // host memory and copies nothing.
  const RunStats stats =
      counters_of_one_run(relu_sigmoid_relu(), islandgpu_options({"islandgpu", "reference"}),
                          "islandgpu reference islandgpu ");
  EXPECT_EQ(stats.host_device_bytes, 4 * kReluBytes);
}

TEST(RunStats, ModelWhollyOnGpuCountsItsInputsAndOutputs) {
  const Graph graph = test::GraphBuilder()
                          .input("x", {1, 8, 32, 32})
                          .node("Relu", {"x"}, {"y"}, {}, "relu")
                          .output("y")
                          .build();
  const RunStats stats = counters_of_one_run(graph, islandgpu_options({"islandgpu"}), "islandgpu ");
  EXPECT_EQ(stats.host_device_bytes, 2 * kReluBytes);
}

TEST(RunStats, CpuCopiesNothing) {
  const RunStats stats = counters_of_one_run(relu_sigmoid_relu(), options_for({"cpu"}, 1), "cpu ");
  EXPECT_EQ(stats.host_device_bytes, 0);
}

// Mali works on OpenCL buffers, so even on PoCL (an OpenCL device that is the CPU) its region
// copies its input and output; the weights went to the device at compile time.
TEST(RunStats, ModelWhollyOnMaliCountsItsInputAndOutput) {
  SKIP_UNLESS_MALI_RUNS();
  const Graph graph =
      test::GraphBuilder()
          .input("x", {1, 8, 16, 16})
          .constant("w", test::random_tensor({8, 8, 3, 3}, 9))
          .node("Conv", {"x", "w"}, {"c"}, concurrency_test::conv_3x3_same(), "conv")
          .node("Relu", {"c"}, {"y"}, {}, "relu")
          .output("y")
          .build();
  SessionOptions options = two_branch_options("mali:any");
  options.targets = {"mali:any"};
  const RunStats stats = counters_of_one_run(graph, options, "mali ");
  EXPECT_EQ(stats.host_device_bytes, 2 * 8 * 16 * 16 * 4);
}

}  // namespace
}  // namespace tessera
