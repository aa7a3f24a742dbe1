// The cpu plugin's thread count, however it arrives (a session's options, a package, Python): a
// count it cannot run a region on is refused at compile with the reason instead of crashing inside
// oneTBB's arena set-up, and the counts it takes give the reference kernels' values.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "graph_builder.hpp"
#include "tessera/plugin_host.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"
#include "test_requirements.hpp"

namespace tessera {
namespace {

using test::GraphBuilder;

std::shared_ptr<const PluginHost> build_tree_host() {
  PluginHostOptions o;
  o.dirs = {TESSERA_PLUGIN_BUILD_DIR};
  o.use_environment = false;
  o.use_default_dirs = false;
  return std::make_shared<const PluginHost>(o);
}

// Conv 3x3 (8 -> 16, bias, pad 1) + Relu: GEMM work the plugin spreads over its threads.
Graph conv_relu() {
  return GraphBuilder()
      .input("x", {1, 8, 10, 10})
      .constant("w", test::random_tensor({16, 8, 3, 3}, 5))
      .constant("b", test::random_tensor({16}, 6))
      .node("Conv", {"x", "w", "b"}, {"c"},
            test::attrs({{"kernel_shape", std::vector<int64_t>{3, 3}},
                         {"pads", std::vector<int64_t>{1, 1, 1, 1}}}),
            "conv")
      .node("Relu", {"c"}, {"y"}, {}, "relu")
      .output("y")
      .build();
}

SessionOptions on_cpu(int32_t threads) {
  SessionOptions o;
  o.targets = {"cpu"};
  o.threads = threads;
  o.pack_mode = PackMode::kNone;
  return o;
}

TEST(CpuThreads, CountsItCannotRunOnAreRefusedAtCompileNamingTheCount) {
  const auto host = build_tree_host();
  if (!host->find("cpu")) TESSERA_SKIP_WITHOUT("the cpu plugin (Highway and oneTBB)");
  const Graph g = conv_relu();
  for (const int32_t threads : {2147483647, 1000000, kMaxThreads + 1, -1}) {
    std::string message;
    try {
      Session s(g, on_cpu(threads), host);
    } catch (const Error& e) {
      message = e.what();
    }
    const std::string want = "cpu: num_threads " + std::to_string(threads) + " is outside 0..1024";
    EXPECT_NE(message.find(want), std::string::npos) << threads << ": " << message;
    EXPECT_NE(message.find("failed to compile on cpu"), std::string::npos) << message;
  }
}

TEST(CpuThreads, CountsItTakesMatchTheReferenceKernels) {
  const auto host = build_tree_host();
  if (!host->find("cpu")) TESSERA_SKIP_WITHOUT("the cpu plugin (Highway and oneTBB)");
  const Graph g = conv_relu();
  const auto inputs = test::random_inputs(g, 9);
  const std::vector<Tensor> want = run_reference(g, inputs);
  for (const int32_t threads : {0, 1, 3, kMaxThreads}) {
    Session s(g, on_cpu(threads), host);
    const std::vector<Tensor> got = s.run(inputs);
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(got[0].shape(), want[0].shape());
    const float* a = got[0].data<float>();
    const float* e = want[0].data<float>();
    for (int64_t i = 0; i < got[0].numel(); ++i) {
      ASSERT_NEAR(a[i], e[i], 1e-4f * (1.0f + std::fabs(e[i]))) << threads << " threads, " << i;
    }
  }
}

}  // namespace
}  // namespace tessera
