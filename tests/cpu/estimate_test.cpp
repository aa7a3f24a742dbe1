// The partitioner's estimates on real plugins: each node's estimate comes from its work (FLOPs,
// bytes) and the matched device family's throughput, `plan` shows the parts, the reference
// plugin is priced as naive single-thread loops, and nothing the cpu plugin can run lands on
// reference by estimate.
#include <gtest/gtest.h>

#include "graph_builder.hpp"
#include "tessera/session.hpp"

namespace tessera {
namespace {

using test::GraphBuilder;
using test::random_tensor;

SessionOptions options_for(std::vector<std::string> targets, int32_t threads) {
  SessionOptions options;
  options.targets = std::move(targets);
  options.plugin_dirs = {std::string(TESSERA_BINARY_DIR) + "/plugins/lib"};
  options.use_plugin_environment = false;
  options.use_default_plugin_dirs = false;
  options.threads = threads;
  return options;
}

// A 3x3 conv (2 * 32*16*3*3 * 56*56 = 28.9 MFLOP) and a Relu on its output.
Graph conv_relu() {
  Attributes conv;
  conv.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  return GraphBuilder()
      .input("x", {1, 16, 56, 56})
      .constant("w", random_tensor({32, 16, 3, 3}, 1))
      .node("Conv", {"x", "w"}, {"c"}, conv, "conv")
      .node("Relu", {"c"}, {"y"}, {}, "relu")
      .output("y")
      .build();
}

const NodePlacement& node(const ExecutionPlan& plan, const std::string& name) {
  for (const NodePlacement& n : plan.nodes) {
    if (n.node == name) return n;
  }
  throw Error("no node " + name);
}

TEST(Estimates, ComeFromWorkAndTheDeviceFamily) {
  Session one(conv_relu(), options_for({"cpu"}, 1));
  Session two(conv_relu(), options_for({"cpu"}, 2));
  const std::string family = one.plan().packs.at(0).family;
  ASSERT_FALSE(family.empty()) << one.plan().packs.at(0).family_reason;
  const NodePlacement& conv1 = node(one.plan(), "conv");
  EXPECT_NE(conv1.estimate.find("compute"), std::string::npos) << conv1.estimate;
  EXPECT_NE(conv1.estimate.find("memory"), std::string::npos) << conv1.estimate;
  EXPECT_NE(conv1.estimate.find("29 MFLOP"), std::string::npos) << conv1.estimate;
  EXPECT_NE(conv1.estimate.find("[" + family + "]"), std::string::npos) << conv1.estimate;
  // The conv is compute-bound: a second core (when the machine has one) halves its compute part.
  const NodePlacement& conv2 = node(two.plan(), "conv");
  EXPECT_LE(conv2.estimate_us, conv1.estimate_us);
  // The Relu moves bytes: its estimate is the memory part plus the launch cost.
  const NodePlacement& relu = node(one.plan(), "relu");
  EXPECT_LT(relu.estimate_us, conv1.estimate_us);
}

TEST(Estimates, ReferenceIsPricedAsNaiveLoops) {
  Session fast(conv_relu(), options_for({"cpu"}, 1));
  Session naive(conv_relu(), options_for({"reference"}, 1));
  ASSERT_EQ(naive.plan().packs.at(0).family, "reference-naive")
      << naive.plan().packs.at(0).family_reason;
  const double cpu_us = node(fast.plan(), "conv").estimate_us;
  const double ref_us = node(naive.plan(), "conv").estimate_us;
  EXPECT_GT(ref_us, 20 * cpu_us) << node(naive.plan(), "conv").estimate << " vs "
                                 << node(fast.plan(), "conv").estimate;
}

TEST(Estimates, CpuNodesNeverMoveToReference) {
  // Whatever the estimates say about a one-node island between reference nodes, a node the cpu
  // plugin runs stays there: reference is chosen only in the user's priority order.
  Session session(conv_relu(), options_for({"cpu", "reference"}, 1));
  for (const NodePlacement& n : session.plan().nodes) {
    EXPECT_EQ(n.plugin, "cpu") << n.node << ": " << n.reason;
  }
}

}  // namespace
}  // namespace tessera
