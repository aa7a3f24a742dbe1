// Sessions used from several threads at once, every output compared with the reference runner's
// (the oracle, computed once on the main thread before any thread starts).
//
// tessera/session.hpp promises that a Session may be shared between threads (run() calls are
// serialized, plan() and graph() are immutable) and applications run several sessions side by
// side, over one plugin host or each with its own. These tests do both on mobilenet_v2 from the
// zoo (at 64x64) on the cpu plugin (reference for what cpu refuses), with two TBB threads per
// session so that the sessions' task arenas run concurrently as well. Under ThreadSanitizer
// (build-tsan in tools/run-tests.sh, with a oneTBB built with TSan) they are the data-race check
// of the session, plugin host, cpu plugin and its TBB-parallel kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "graph_builder.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/passes.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"
#include "zoo.hpp"

namespace tessera {
namespace {

constexpr int kThreads = 4;
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

std::string build_plugin_dir() {
  return std::string(TESSERA_BINARY_DIR) + "/plugins/lib";
}

SessionOptions cpu_options() {
  SessionOptions options;
  options.targets = {"cpu", "reference"};
  options.plugin_dirs = {build_plugin_dir()};
  options.use_plugin_environment = false;
  options.use_default_plugin_dirs = false;
  options.threads = kSessionThreads;
  return options;
}

std::shared_ptr<const PluginHost> build_tree_host() {
  PluginHostOptions options;
  options.dirs = {build_plugin_dir()};
  options.use_environment = false;
  options.use_default_dirs = false;
  return std::make_shared<const PluginHost>(options);
}

// "" when `got` matches the oracle within 1e-4 relative (the cpu kernels' summation order differs
// from the reference's), else what differs first.
std::string compare(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  if (got.size() != want.size()) {
    return std::to_string(got.size()) + " outputs, want " + std::to_string(want.size());
  }
  for (size_t o = 0; o < want.size(); ++o) {
    if (got[o].shape() != want[o].shape()) {
      return "output " + std::to_string(o) + " shape " + shape_str(got[o].shape()) + ", want " +
             shape_str(want[o].shape());
    }
    const float* g = got[o].data<float>();
    const float* w = want[o].data<float>();
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      if (!(std::fabs(g[i] - w[i]) <= 1e-4f * std::max(1.0f, std::fabs(w[i])))) {
        return "output " + std::to_string(o) + " element " + std::to_string(i) + ": " +
               std::to_string(g[i]) + ", want " + std::to_string(w[i]);
      }
    }
  }
  return "";
}

// Starts `body(thread index)` on kThreads threads released together (so that construction and
// the first runs overlap), joins them and returns every failure they recorded.
template <typename Body>
std::vector<std::string> run_together(Body body) {
  std::mutex mutex;
  std::condition_variable cv;
  int ready = 0;
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      {
        std::unique_lock<std::mutex> lock(mutex);
        ++ready;
        cv.notify_all();
        cv.wait(lock, [&] { return ready == kThreads; });
      }
      std::string failure;
      try {
        failure = body(t);
      } catch (const std::exception& e) {
        failure = std::string("threw: ") + e.what();
      }
      if (!failure.empty()) {
        std::lock_guard<std::mutex> lock(mutex);
        failures.push_back("thread " + std::to_string(t) + ": " + failure);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  return failures;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string all;
  for (const std::string& l : lines) all += l + "\n";
  return all;
}

// Each thread builds its own session (even threads over one shared plugin host, odd ones loading
// their own), runs it, destroys it while the others still run, and does it again.
TEST(ConcurrentSessions, ThreadsWithTheirOwnSessionsMatchTheOracle) {
  const Case& c = mobilenet_v2();
  const std::shared_ptr<const PluginHost> host = build_tree_host();
  const std::vector<std::string> failures = run_together([&](int t) -> std::string {
    for (int round = 0; round < 2; ++round) {
      const int set = (t + round) % kInputSets;
      std::unique_ptr<Session> session =
          t % 2 == 0 ? std::make_unique<Session>(c.graph, cpu_options(), host)
                     : std::make_unique<Session>(c.graph, cpu_options());
      const bool on_cpu = std::any_of(session->plan().nodes.begin(), session->plan().nodes.end(),
                                      [](const NodePlacement& p) { return p.plugin == "cpu"; });
      if (!on_cpu) return "no node placed on cpu";
      const std::string diff = compare(session->run(c.inputs[static_cast<size_t>(set)]),
                                       c.oracle[static_cast<size_t>(set)]);
      if (!diff.empty()) return "round " + std::to_string(round) + ": " + diff;
    }
    return "";
  });
  EXPECT_TRUE(failures.empty()) << join_lines(failures);
}

// All threads run one session with different inputs and read its plan and profile meanwhile:
// run() serializes, so every output must be the one for that thread's input.
TEST(ConcurrentSessions, ThreadsSharingOneSessionMatchTheOracle) {
  const Case& c = mobilenet_v2();
  Session session(c.graph, cpu_options());
  const size_t regions = session.plan().regions.size();
  const std::vector<std::string> failures = run_together([&](int t) -> std::string {
    for (int round = 0; round < 2; ++round) {
      const int set = (t + round) % kInputSets;
      const std::string diff = compare(session.run(c.inputs[static_cast<size_t>(set)]),
                                       c.oracle[static_cast<size_t>(set)]);
      if (!diff.empty()) return "round " + std::to_string(round) + ": " + diff;
      // The profile belongs to whichever run finished last; it always covers every region.
      if (session.profile().size() != regions) return "profile without every region";
      if (session.plan().regions.size() != regions) return "plan changed while running";
    }
    return "";
  });
  EXPECT_TRUE(failures.empty()) << join_lines(failures);
}

}  // namespace
}  // namespace tessera
