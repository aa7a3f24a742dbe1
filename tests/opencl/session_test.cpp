// The mali plugin through the real plugin host and Session: a graph partly run on mali:any (PoCL
// in CI), the rest (Hardmax) falling back to the reference plugin; outputs match the reference run.
// A named mali target without a device is an error, or skipped with allow_fallback.
#include <gtest/gtest.h>

#include <cmath>

#include "../plugins/graph_builder.hpp"
#include "opencl_plugin_test_util.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"
#include "tessera_opencl/runtime.hpp"
#include "test_requirements.hpp"

namespace tessera {
namespace {

using opencl_test::random_tensor;

TEST(MaliSession, MixedGraphMatchesReference) {
  if (opencl::probe_devices().devices.empty())
    TESSERA_SKIP_WITHOUT("an OpenCL device") << "probe found none";
  const Attributes conv = opencl_test::attrs({{"pads", opencl_test::Ints{1, 1, 1, 1}}});
  const Attributes pool = opencl_test::pool_2x2_stride2();
  Graph g = test::GraphBuilder()
                .input("x", {1, 16, 32, 32})
                .constant("w", random_tensor({32, 16, 3, 3}, 1))
                .constant("b", random_tensor({32}, 2))
                .node("Conv", {"x", "w", "b"}, {"c"}, conv, "conv")
                .node("Relu", {"c"}, {"r"}, {}, "relu")
                .node("Hardmax", {"r"}, {"t"}, {}, "hardmax")
                .node("MaxPool", {"t"}, {"p"}, pool, "pool")
                .node("Softmax", {"p"}, {"y"}, {}, "softmax")
                .output("y")
                .build();
  const Graph reference_graph = g;
  const SessionOptions options = opencl_test::session_options({"mali:any", "reference"}, "opencl");
  Session session(std::move(g), options);
  bool conv_on_mali = false, hardmax_on_reference = false;
  for (const NodePlacement& p : session.plan().nodes) {
    if (p.node == "conv") conv_on_mali = p.plugin == "mali";
    if (p.node == "hardmax") hardmax_on_reference = p.plugin == "reference";
  }
  std::string reasons;
  for (const NodePlacement& p : session.plan().nodes) reasons += p.node + ": " + p.reason + "\n";
  EXPECT_TRUE(conv_on_mali) << reasons;
  EXPECT_TRUE(hardmax_on_reference);
  const std::map<std::string, Tensor> inputs = {{"x", random_tensor({1, 16, 32, 32}, 3)}};
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(reference_graph, inputs);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].shape(), want[0].shape());
  opencl_test::expect_all_near(got[0], want[0], 1e-4f);
}

// An embedding lookup whose token ids are a graph input runs on mali; an id outside the table
// (here 50 of 40 rows) cannot be caught before the kernel reads it, so the kernel flags it and
// the run fails naming the node, as core's Gather does, and the session runs again afterwards.
TEST(MaliSession, RuntimeGatherIndexOutOfRangeFailsNamingTheNode) {
  if (opencl::probe_devices().devices.empty())
    TESSERA_SKIP_WITHOUT("an OpenCL device") << "probe found none";
  Graph g = test::GraphBuilder()
                .input("ids", {2, 3}, DType::kInt64)
                .constant("table", random_tensor({40, 8}, 4))
                .node("Gather", {"table", "ids"}, {"y"}, {}, "embed")
                .output("y")
                .build();
  const Graph reference_graph = g;
  Session session(std::move(g), opencl_test::session_options({"mali:any"}, "opencl"));
  ASSERT_EQ(session.plan().nodes.at(0).plugin, "mali");
  const std::map<std::string, Tensor> good = {
      {"ids", Tensor::from_vector<int64_t>({2, 3}, {0, 39, -1, -40, 7, 12})}};
  const std::vector<Tensor> got = session.run(good);
  const std::vector<Tensor> want = run_reference(reference_graph, good);
  ASSERT_EQ(got.size(), 1u);
  opencl_test::expect_all_near(got[0], want[0], 0.0f);
  try {
    session.run({{"ids", Tensor::from_vector<int64_t>({2, 3}, {0, 1, 2, 50, 4, 5})}});
    FAIL() << "an id of 50 into a 40-row table ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'embed' (Gather)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("outside [-40, 40)"), std::string::npos) << e.what();
  }
  opencl_test::expect_all_near(session.run(good).at(0), want[0], 0.0f);
}

// A target the user named whose selector matches no device is an error naming the target and
// why (not a warning followed by the whole graph on the reference kernels); with allow_fallback
// it is skipped with that reason as a warning and the graph runs on the next target.
TEST(MaliSession, NamedTargetWithoutDeviceIsAnErrorUnlessFallbackAllowed) {
  if (opencl::probe_devices().devices.empty())
    TESSERA_SKIP_WITHOUT("an OpenCL device") << "probe found none";
  const auto graph = [] {
    return test::GraphBuilder()
        .input("x", {1, 4, 8, 8})
        .node("Relu", {"x"}, {"y"}, {}, "relu")
        .output("y")
        .build();
  };
  SessionOptions options =
      opencl_test::session_options({"mali:no-such-device", "reference"}, "opencl");
  try {
    Session session(graph(), options);
    ADD_FAILURE() << "a named target without a device was accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("target 'mali:no-such-device' cannot run: no usable device for selector "
                     "'no-such-device'"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("allow_fallback"), std::string::npos) << m;
  }
  options.allow_fallback = true;
  Session session(graph(), options);
  ASSERT_FALSE(session.plan().warnings.empty());
  EXPECT_NE(session.plan().warnings[0].find("target 'mali:no-such-device' skipped: no usable "
                                            "device"),
            std::string::npos)
      << session.plan().warnings[0];
  const std::map<std::string, Tensor> inputs = {{"x", random_tensor({1, 4, 8, 8}, 5)}};
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(graph(), inputs);
  ASSERT_EQ(got.size(), 1u);
  opencl_test::expect_all_near(got[0], want[0], 0.0f);
  for (const NodePlacement& p : session.plan().nodes) EXPECT_EQ(p.plugin, "reference");
}

// A selector of digits is an index into the plugin's devices (as `tessera info` numbers them),
// never a piece of the name: PoCL's device name contains "512" (avx512), so "mali:5" used to
// match it by substring.
TEST(MaliSession, DigitSelectorIsADeviceIndex) {
  const size_t count = opencl::probe_devices().devices.size();
  if (count == 0) TESSERA_SKIP_WITHOUT("an OpenCL device") << "probe found none";
  const Graph g = test::GraphBuilder()
                      .input("x", {1, 4, 8, 8})
                      .node("Relu", {"x"}, {"y"}, {}, "relu")
                      .output("y")
                      .build();
  for (const std::string& selector : std::vector<std::string>{"0", "00"}) {
    Session session(g, opencl_test::session_options({"mali:" + selector}, "opencl"));
    EXPECT_EQ(session.plan().nodes.at(0).plugin, "mali") << selector;
    const std::map<std::string, Tensor> inputs = {{"x", random_tensor({1, 4, 8, 8}, 6)}};
    opencl_test::expect_all_near(session.run(inputs)[0], run_reference(g, inputs)[0], 0.0f);
  }
  for (const std::string& selector :
       std::vector<std::string>{std::to_string(count), "5", "99999999999999999999999"}) {
    try {
      Session session(g, opencl_test::session_options({"mali:" + selector}, "opencl"));
      ADD_FAILURE() << "selector '" << selector << "' matched a device";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("device index 0 is not the selector's index"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace tessera
