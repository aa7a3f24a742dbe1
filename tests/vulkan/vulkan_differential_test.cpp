// The shared differential cases (tests/plugins/differential_suite.cpp) on 'vulkan:any' with the
// validation layer on, the reference plugin taking what vulkan does not: every output against
// tessera::run_reference. A case whose op vulkan implements must place at least one node on
// vulkan (kTaken), so an op that silently stops being taken fails here; the cases of values that
// are not float32 (masks, indices, int64 arithmetic) must place every node there (kAllTaken), so
// none bounces through the host.
#include <set>

#include "differential_suite.hpp"
#include "vulkan_test_util.hpp"

namespace tessera::test {
namespace {

// Cases built only from ops the vulkan plugin implements.
const std::set<std::string> kTaken = {"UnaryHardSwish",
                                      "SubBroadcastRow",
                                      "DivPerChannel",
                                      "MulBothBroadcast",
                                      "MaxBroadcast",
                                      "MinSameShape",
                                      "PowSquare",
                                      "PRelu",
                                      "ConvSiLU",
                                      "SiLUAlone",
                                      "DepthwiseSiLU",
                                      "Pointwise1x1HardSwish",
                                      "MatMulTanh",
                                      "MatMulGeluErfChain",
                                      "ConvHardSwish",
                                      "SqueezeExcitation",
                                      "ReduceMeanSpatial",
                                      "ReduceMeanLastAxis",
                                      "ReduceMaxMiddleAxis",
                                      "ReduceSumAll",
                                      "ChannelShuffle",
                                      "TransposeToChannelsLast",
                                      "SliceSteps",
                                      "SplitChannels",
                                      "ExpandRows",
                                      "GatherIndexMatrixAxis1",
                                      "GatherFlatIndices",
                                      "GatherClassToken",
                                      "PadReflect",
                                      "PadConstant",
                                      "CastFloatToFloat",
                                      "Resize2x_nearest",
                                      "Resize2x_linear",
                                      "ResizeAlignCornersSizes",
                                      "ConvTransposeStride2OutputPadding",
                                      "ConvTransposeUpsample2x2",
                                      "ConvTransposeGroupsDilated",
                                      "ConvTransposeOutputShape",
                                      "ConvTransposeSameUpper",
                                      "ConvTransposeRuntimeWeights",
                                      "ConvTranspose1D",
                                      "TileEveryAxis",
                                      "TileRows",
                                      "UnarySelu",
                                      "UnaryTan",
                                      "UnaryAtan",
                                      "UnarySign",
                                      "UnaryRound",
                                      "UnarySoftsign",
                                      "UnaryCelu",
                                      "UnaryThresholdedRelu",
                                      "UnaryShrink",
                                      "DepthToSpaceDCR",
                                      "DepthToSpaceCRD",
                                      "DepthToSpaceBlock3",
                                      "SpaceToDepth",
                                      "InstanceNorm",
                                      "InstanceNorm1D",
                                      "GroupNormPerGroupScale",
                                      "GroupNormPerChannelScale"};

// Cases of int64/int32/int8/uint8/bool values whose every node the vulkan plugin takes.
const std::set<std::string> kAllTaken = {"IntegerArithmeticCompareWhere",
                                         "AddUInt8Broadcast",
                                         "SubInt8",
                                         "MulUInt8Scalar",
                                         "MaxInt8Broadcast",
                                         "DivInt8",
                                         "DivUInt8",
                                         "CtcGreedyArgMaxInt",
                                         "MaskComparisonsLogicalWhere",
                                         "WhereMaskedFillBroadcast",
                                         "AttentionMaskInt64",
                                         "CastFloatToIntegersAndBool",
                                         "ArgMaxMiddleAxis",
                                         "ArgMinMiddleAxisLastIndex",
                                         "ArgMinLastAxis",
                                         "ArgMaxLastAxisNoKeepdims",
                                         "GatherRuntimeIndices"};

class VulkanDifferentialTest : public ::testing::TestWithParam<std::string> {};

TEST_P(VulkanDifferentialTest, MatchesReference) {
  TESSERA_REQUIRE_VULKAN();
  const DifferentialCase* c = find_differential_case(GetParam());
  ASSERT_NE(c, nullptr);
  const Graph graph = c->build();
  const SessionOptions options = vulkan_options({"reference"});
  Session session(graph, options, vulkan_host());
  bool used = false;
  bool all = true;
  std::string reasons;
  for (const NodePlacement& p : session.plan().nodes) {
    used = used || p.plugin == "vulkan";
    all = all && p.plugin == "vulkan";
    reasons += "\n  " + p.node + ": " + p.reason;
  }
  const auto inputs = random_inputs(graph, 5);
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(graph, inputs);
  expect_outputs_match(*c, got, want, "the reference runner", " (placement:" + reasons + ")");
  if (HasFatalFailure()) return;
  if (kAllTaken.count(c->name) != 0) {
    EXPECT_TRUE(all) << c->name << ": vulkan left nodes to another plugin:" << reasons;
  } else if (kTaken.count(c->name) != 0) {
    EXPECT_TRUE(used) << c->name << ": vulkan took no node:" << reasons;
  } else if (!used) {
    GTEST_SKIP() << "values match, but vulkan took no node:" << reasons;
  }
}

// The shared suite's own TEST_P is linked in (differential_suite.cpp) but runs here through
// VulkanDifferentialTest, which sets the target's options.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PluginDifferentialTest);

INSTANTIATE_TEST_SUITE_P(vulkan, VulkanDifferentialTest,
                         ::testing::ValuesIn(differential_case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace tessera::test
