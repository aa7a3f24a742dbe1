// The adreno plugin through the real plugin host and Session: a Conv-Relu-Pool graph on
// adreno:any (PoCL in CI), with a Hardmax falling back to the reference plugin; outputs match
// tessera::run_reference.
#include <gtest/gtest.h>

#include <cmath>

#include "../plugins/graph_builder.hpp"
#include "image_device.hpp"
#include "opencl_plugin_test_util.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"
#include "tessera_opencl/runtime.hpp"
#include "test_requirements.hpp"

namespace tessera {
namespace {

using opencl_test::any_image_device;
using opencl_test::random_tensor;

TEST(AdrenoSession, ConvReluPoolMatchesReference) {
  if (!any_image_device())
    TESSERA_SKIP_WITHOUT("an OpenCL device with image support") << "probe found none";
  const Attributes conv = opencl_test::attrs({{"pads", opencl_test::Ints{1, 1, 1, 1}}});
  const Attributes pool = opencl_test::pool_2x2_stride2();
  Graph g = test::GraphBuilder()
                .input("x", {1, 6, 16, 16})
                .constant("w", random_tensor({12, 6, 3, 3}, 1))
                .constant("b", random_tensor({12}, 2))
                .node("Conv", {"x", "w", "b"}, {"c"}, conv, "conv")
                .node("Relu", {"c"}, {"r"}, {}, "relu")
                .node("MaxPool", {"r"}, {"p"}, pool, "pool")
                .node("Hardmax", {"p"}, {"y"}, {}, "hardmax")
                .output("y")
                .build();
  const Graph reference_graph = g;
  const SessionOptions options =
      opencl_test::session_options({"adreno:any", "reference"}, "adreno");
  Session session(std::move(g), options);
  std::string reasons;
  std::map<std::string, std::string> placed;
  for (const NodePlacement& p : session.plan().nodes) {
    reasons += p.node + ": " + p.plugin + " " + p.reason + "\n";
    placed[p.node] = p.plugin;
  }
  EXPECT_EQ(placed["conv"], "adreno") << reasons;
  EXPECT_EQ(placed["relu"], "adreno") << reasons;
  EXPECT_EQ(placed["pool"], "adreno") << reasons;
  EXPECT_EQ(placed["hardmax"], "reference") << reasons;
  const std::map<std::string, Tensor> inputs = {{"x", random_tensor({1, 6, 16, 16}, 3)}};
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(reference_graph, inputs);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].shape(), want[0].shape());
  opencl_test::expect_all_near(got[0], want[0], 1e-4f);
}

// A node whose tensor exceeds the device's image2d width is answered unsupported with the reason
// and falls back to the reference plugin; the values still match.
// The mixed-precision pass on adreno fp16: Conv (always) and the Relu/Add it feeds (follow) run
// fp16, Softmax (never) and the Mul that reads it stay fp32, so the plan has regions of both
// precisions on one target; every node says which, and the outputs stay within fp16 storage's
// error of the reference, while the fp32 tail adds none of its own.
TEST(AdrenoSession, MixedPrecisionSplitsRegionsByPrecision) {
  if (!any_image_device())
    TESSERA_SKIP_WITHOUT("an OpenCL device with image support") << "probe found none";
  const Attributes conv = opencl_test::attrs({{"pads", opencl_test::Ints{1, 1, 1, 1}}});
  const auto graph = [&] {
    return test::GraphBuilder()
        .input("x", {1, 8, 12, 12})
        .constant("w", random_tensor({8, 8, 3, 3}, 11))
        .node("Conv", {"x", "w"}, {"c"}, conv, "conv")
        .node("Relu", {"c"}, {"r"}, {}, "relu")
        .node("Add", {"r", "x"}, {"a"}, {}, "add")
        .node("Softmax", {"a"}, {"s"}, opencl_test::attrs({{"axis", int64_t{-1}}}), "softmax")
        .node("Mul", {"s", "s"}, {"y"}, {}, "square")
        .output("y")
        .build();
  };
  SessionOptions options = opencl_test::session_options({"adreno:any"}, "adreno");
  options.precision = "fp16";
  options.mixed_precision.enabled = true;
  Session session(graph(), options);
  std::map<std::string, std::string> precision;
  for (const NodePlacement& p : session.plan().nodes) precision[p.node] = p.precision;
  EXPECT_EQ(precision["conv"], "fp16");
  EXPECT_EQ(precision["relu"], "fp16");
  EXPECT_EQ(precision["add"], "fp16");
  EXPECT_EQ(precision["softmax"], "fp32");
  EXPECT_EQ(precision["square"], "fp32");
  ASSERT_EQ(session.plan().regions.size(), 2u);
  EXPECT_EQ(session.plan().regions[0].precision, "fp16");
  EXPECT_EQ(session.plan().regions[1].precision, "fp32");
  const std::map<std::string, Tensor> inputs = {{"x", random_tensor({1, 8, 12, 12}, 12)}};
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(graph(), inputs);
  ASSERT_EQ(got.size(), 1u);
  opencl_test::expect_all_near(got[0], want[0], 5e-3f);

  // Mixed precision over an fp32 session changes nothing: refused, naming what it needs.
  options.precision = "fp32";
  try {
    Session fp32(graph(), options);
    ADD_FAILURE() << "mixed precision with fp32 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fp16 or fp16-acc32"), std::string::npos) << e.what();
  }
}

TEST(AdrenoSession, TooWideForImageFallsBackToReference) {
  if (!any_image_device())
    TESSERA_SKIP_WITHOUT("an OpenCL device with image support") << "probe found none";
  Graph g = test::GraphBuilder()
                .input("x", {1, 4, 2, 70000})
                .input("z", {1, 4, 2, 8})
                .node("Relu", {"x"}, {"y"}, {}, "wide_relu")
                .node("Relu", {"z"}, {"w"}, {}, "small_relu")
                .output("y")
                .output("w")
                .build();
  const Graph reference_graph = g;
  const SessionOptions options =
      opencl_test::session_options({"adreno:any", "reference"}, "adreno");
  Session session(std::move(g), options);
  bool wide_fell_back = false, small_on_adreno = false;
  std::string reasons;
  for (const NodePlacement& p : session.plan().nodes) {
    reasons += p.node + ": " + p.plugin + " " + p.reason + "\n";
    if (p.node == "wide_relu") {
      wide_fell_back = p.plugin == "reference" &&
                       p.reason.find("needs a 70000-wide image, device max") != std::string::npos;
    }
    if (p.node == "small_relu") small_on_adreno = p.plugin == "adreno";
  }
  EXPECT_TRUE(wide_fell_back) << reasons;
  EXPECT_TRUE(small_on_adreno) << reasons;
  const std::map<std::string, Tensor> inputs = {{"x", random_tensor({1, 4, 2, 70000}, 4)},
                                                {"z", random_tensor({1, 4, 2, 8}, 5)}};
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(reference_graph, inputs);
  ASSERT_EQ(got.size(), 2u);
  for (size_t o = 0; o < 2; ++o) {
    ASSERT_EQ(got[o].shape(), want[o].shape());
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      ASSERT_EQ(got[o].data<float>()[i], want[o].data<float>()[i]) << o << " " << i;
    }
  }
}

}  // namespace
}  // namespace tessera
