// Sessions used from several threads at once, every output compared with the reference runner's
// (the oracle, computed once on the main thread before any thread starts).
//
// tessera/session.hpp promises that a Session may be shared between threads (run() calls overlap,
// each with its own activations; plan() and graph() are immutable) and applications run several
// sessions side by side, over one plugin host or each with its own. These tests do both on
// mobilenet_v2 from the zoo (at 64x64) on the cpu plugin (reference for what cpu refuses), and
// share a session split into four cpu and reference regions, with two TBB threads per session so
// that the sessions' task arenas run concurrently as well. Under ThreadSanitizer
// (build-tsan in tools/run-tests.sh, with a oneTBB built with TSan) they are the data-race check
// of the session, plugin host, cpu plugin and its TBB-parallel kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "concurrency_test_util.hpp"
#include "graph_builder.hpp"
#include "model_builder.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/passes.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"
#include "zoo.hpp"

namespace tessera {
namespace {

using concurrency_test::join_lines;
using concurrency_test::run_together;

constexpr int kInputSets = 2;  // distinct inputs, each with its oracle; threads take turns
// TBB threads per session: two, so that each session's kernels run as parallel TBB tasks and,
// under ThreadSanitizer, the hand-offs to TBB workers are checked too. build-tsan links a oneTBB
// built with TSan (tools/build-tbb-tsan.sh); Debian's is not instrumented, and with it TSan cannot
// see those hand-offs and reports every task as a race (tests/SANITIZERS.md).
constexpr int kSessionThreads = 2;

struct Case {
  Graph graph;
  std::vector<std::map<std::string, Tensor>> inputs;  // kInputSets
  std::vector<std::vector<Tensor>> oracle;            // run_reference of each input set
};

// mobilenet_v2 from the zoo at 64x64 instead of 224x224: the network is convolutional up to its
// global pooling, so every layer, fusion and residual is there at a twelfth of the work (the
// reference runs and ThreadSanitizer's slowdown make the 224 version take minutes).
Graph mobilenet_v2_64() {
  ImportOptions options;
  options.prepare = false;
  Graph g = import_onnx_bytes(zoo::build_zoo_model("mobilenet_v2", {}), "mobilenet_v2 (zoo)", "",
                              options);
  g.values[static_cast<size_t>(g.inputs.at(0))].shape = {1, 3, 64, 64};
  prepare_graph(g);
  return g;
}

// Built once per process: the reference runs are the slow part under sanitizers.
const Case& mobilenet_v2() {
  static const Case c = [] {
    Case made;
    made.graph = mobilenet_v2_64();
    for (int i = 0; i < kInputSets; ++i) {
      made.inputs.push_back(test::random_inputs(made.graph, 101 + 10 * static_cast<uint32_t>(i)));
      made.oracle.push_back(run_reference(made.graph, made.inputs.back()));
    }
    return made;
  }();
  return c;
}

SessionOptions cpu_options() {
  return concurrency_test::options_for({"cpu", "reference"}, kSessionThreads);
}

// Four regions on cpu and reference, the first two independent (one run executes them at once)
// and the last two after them: conv+relu (cpu) and pool (reference) read x, add (cpu) joins them,
// pool (reference) ends.
const Case& cpu_reference_split() {
  static const Case c = [] {
    Case made;
    made.graph = test::GraphBuilder()
                     .input("x", {1, 8, 24, 24})
                     .constant("w", test::random_tensor({8, 8, 3, 3}, 7))
                     .node("Conv", {"x", "w"}, {"c"}, concurrency_test::conv_3x3_same(), "conv")
                     .node("Relu", {"c"}, {"r"}, {}, "relu")
                     .node("MaxPool", {"x"}, {"p"}, concurrency_test::pool_cpu_refuses(), "pool1")
                     .node("Add", {"r", "p"}, {"s"}, {}, "add")
                     .node("MaxPool", {"s"}, {"y"}, concurrency_test::pool_cpu_refuses(), "pool2")
                     .output("y")
                     .output("r")
                     .build();
    for (int i = 0; i < kInputSets; ++i) {
      made.inputs.push_back(test::random_inputs(made.graph, 201 + 10 * static_cast<uint32_t>(i)));
      made.oracle.push_back(run_reference(made.graph, made.inputs.back()));
    }
    return made;
  }();
  return c;
}

// Each thread builds its own session (even threads over one shared plugin host, odd ones loading
// their own), runs it, destroys it while the others still run, and does it again.
TEST(ConcurrentSessions, ThreadsWithTheirOwnSessionsMatchTheOracle) {
  const Case& c = mobilenet_v2();
  const std::shared_ptr<const PluginHost> host = concurrency_test::build_tree_host();
  const std::vector<std::string> failures = run_together([&](int t) -> std::string {
    for (int round = 0; round < 2; ++round) {
      const int set = (t + round) % kInputSets;
      std::unique_ptr<Session> session =
          t % 2 == 0 ? std::make_unique<Session>(c.graph, cpu_options(), host)
                     : std::make_unique<Session>(c.graph, cpu_options());
      const bool on_cpu = std::any_of(session->plan().nodes.begin(), session->plan().nodes.end(),
                                      [](const NodePlacement& p) { return p.plugin == "cpu"; });
      if (!on_cpu) return "no node placed on cpu";
      const std::string diff = first_mismatch(session->run(c.inputs[static_cast<size_t>(set)]),
                                              c.oracle[static_cast<size_t>(set)]);
      if (!diff.empty()) return "round " + std::to_string(round) + ": " + diff;
    }
    return "";
  });
  EXPECT_TRUE(failures.empty()) << join_lines(failures);
}

// All threads run one session with different inputs and read its plan, profile and counters
// meanwhile: the runs overlap, each with its own boundary buffers, so every output must be the one
// for that thread's input.
void expect_shared_session_matches(Session& session, const Case& c) {
  const size_t regions = session.plan().regions.size();
  const std::vector<std::string> failures = run_together([&](int t) -> std::string {
    for (int round = 0; round < 3; ++round) {
      const int set = (t + round) % kInputSets;
      const std::string diff = first_mismatch(session.run(c.inputs[static_cast<size_t>(set)]),
                                              c.oracle[static_cast<size_t>(set)]);
      if (!diff.empty()) return "round " + std::to_string(round) + ": " + diff;
      // The profile belongs to whichever run finished last; it always covers every region.
      if (session.profile().size() != regions) return "profile without every region";
      if (session.plan().regions.size() != regions) return "plan changed while running";
      if (session.last_run_stats().host_device_bytes != 0) return "host memory counted as copied";
    }
    return "";
  });
  EXPECT_TRUE(failures.empty()) << join_lines(failures);
}

TEST(ConcurrentSessions, ThreadsSharingOneCpuSessionMatchTheOracle) {
  Session session(mobilenet_v2().graph, concurrency_test::options_for({"cpu"}, kSessionThreads));
  expect_shared_session_matches(session, mobilenet_v2());
}

TEST(ConcurrentSessions, ThreadsSharingOneCpuReferenceSessionMatchTheOracle) {
  Session session(cpu_reference_split().graph, cpu_options());
  std::string plugins;
  for (const RegionPlacement& r : session.plan().regions) plugins += r.plugin + " ";
  ASSERT_EQ(plugins, "cpu reference cpu reference ");
  expect_shared_session_matches(session, cpu_reference_split());
}

// Threads sharing one session whose plans they keep replacing: the split graph's batch is open
// and the plan cache holds one plan, so a run of batch 1 plans again and drops the batch-2 plan
// while other threads still run it (and the other way round). Each run keeps its plan alive, and
// every output matches the oracle for its batch.
TEST(ConcurrentSessions, ThreadsReplanningOneSessionMatchTheOracle) {
  Graph graph = cpu_reference_split().graph;
  // As an importer leaves it: the input's batch open, the other values' shapes to infer.
  for (Value& v : graph.values) {
    if (v.constant || graph.find_value(v.name) == graph.inputs.at(0)) continue;
    v.shape.clear();
    v.shape_known = false;
  }
  graph.values[static_cast<size_t>(graph.inputs.at(0))].open_dims = {true, false, false, false};
  prepare_graph(graph);
  SessionOptions options = cpu_options();
  options.plan_cache_size = 1;
  Session session(graph, options);
  Case c;
  for (int64_t batch = 1; batch <= kInputSets; ++batch) {
    const Tensor x = test::random_tensor({batch, 8, 24, 24}, 301 + static_cast<uint32_t>(batch));
    c.inputs.push_back({{"x", x}});
    c.oracle.push_back(run_reference(prepare_for_inputs(graph, c.inputs.back()), c.inputs.back()));
  }
  const std::vector<std::string> failures = run_together([&](int t) -> std::string {
    for (int round = 0; round < 3; ++round) {
      const size_t set = static_cast<size_t>((t + round) % kInputSets);
      const std::string diff = first_mismatch(session.run(c.inputs[set]), c.oracle[set]);
      if (!diff.empty()) return "round " + std::to_string(round) + ": " + diff;
    }
    return "";
  });
  EXPECT_TRUE(failures.empty()) << join_lines(failures);
  // Both batches ran, each planned at least once.
  EXPECT_GE(session.plan().plan_number, kInputSets);
}

// Threads sharing one session whose shapes follow from values it computes: the positions where a
// convolution's output passes a threshold (NonZero), so the graph runs in two stages and the
// second is planned per value while other threads run the other input's plans.
TEST(ConcurrentSessions, ThreadsSharingOneStagedSessionMatchTheOracle) {
  test::ModelBuilder m(13);
  m.input("x", onnx::TensorProto::FLOAT, {1, 8, 24, 24});
  m.output("where", onnx::TensorProto::INT64);
  m.output("conv", onnx::TensorProto::FLOAT);
  const Tensor w = test::random_tensor({8, 8, 3, 3}, 77);
  m.raw_float("w", {8, 8, 3, 3}, std::vector<float>(w.data<float>(), w.data<float>() + w.numel()));
  m.raw_float("threshold", {}, {2.0f});
  test::ModelBuilder::add_ints_attr(m.node("Conv", {"x", "w"}, {"conv"}, "conv"), "pads",
                                    {1, 1, 1, 1});
  m.node("Greater", {"conv", "threshold"}, {"high"}, "high");
  m.node("NonZero", {"high"}, {"where"}, "where");
  const Graph graph = import_onnx_bytes(m.bytes(), "staged.onnx", "");
  ASSERT_FALSE(graph.value_needed_at_run.empty());
  Session session(graph, cpu_options());
  Case c;
  for (int i = 0; i < kInputSets; ++i) {
    c.inputs.push_back({{"x", test::random_tensor({1, 8, 24, 24}, 401 + static_cast<uint32_t>(i))}});
    c.oracle.push_back(run_reference(graph, c.inputs.back()));
  }
  ASSERT_NE(c.oracle[0][0].shape(), c.oracle[1][0].shape()) << "the inputs keep as many values";
  const std::vector<std::string> failures = run_together([&](int t) -> std::string {
    for (int round = 0; round < 3; ++round) {
      const size_t set = static_cast<size_t>((t + round) % kInputSets);
      const std::vector<Tensor> got = session.run(c.inputs[set]);
      if (got[0].shape() != c.oracle[set][0].shape() ||
          std::memcmp(got[0].raw(), c.oracle[set][0].raw(), got[0].nbytes()) != 0) {
        return "round " + std::to_string(round) + ": NonZero's indices differ";
      }
      const std::string diff = first_mismatch({got[1]}, {c.oracle[set][1]});
      if (!diff.empty()) return "round " + std::to_string(round) + ": " + diff;
    }
    return "";
  });
  EXPECT_TRUE(failures.empty()) << join_lines(failures);
}

}  // namespace
}  // namespace tessera
