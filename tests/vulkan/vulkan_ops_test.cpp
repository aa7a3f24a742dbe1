// The vulkan kernels on shapes the shared differential cases do not reach: tile edges of the
// implicit-GEMM convolution and the tiled matrix product, groups, strides, dilations, asymmetric
// pads, depthwise channel multipliers, fused epilogues, transposed and batch-broadcast operands,
// pooling variants, and a launch larger than one dispatch row of work-groups. Each runs on
// 'vulkan:any' alone with the validation layer on and is compared with tessera::run_reference.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <tuple>

#include "vulkan_test_util.hpp"

namespace tessera::test {
namespace {

using V = std::vector<int64_t>;

struct OpCase {
  std::string name;
  std::function<Graph()> build;
};

Graph conv(Shape x, Shape w, Attributes a, bool bias, const std::string& act = "") {
  GraphBuilder b;
  b.input("x", x).constant("w", random_tensor(w, 11));
  if (bias) b.constant("b", random_tensor({w[0]}, 12));
  b.node("Conv", {"x", "w", bias ? "b" : ""}, {act.empty() ? "y" : "c"}, std::move(a));
  if (act == "Clip") {
    b.constant("lo", Tensor::from_vector({}, std::vector<float>{0.0f}))
        .constant("hi", Tensor::from_vector({}, std::vector<float>{6.0f}))
        .node("Clip", {"c", "lo", "hi"}, {"y"});
  } else if (!act.empty()) {
    b.node(act, {"c"}, {"y"});
  }
  return b.output("y").build();
}

std::vector<OpCase> cases() {
  std::vector<OpCase> c;
  c.push_back({"ConvTileEdges", [] {
                 return conv({1, 5, 13, 11}, {70, 5, 3, 3}, attrs({{"pads", V{1, 1, 1, 1}}}), true);
               }});
  c.push_back({"ConvStrideDilationAsymmetricPads", [] {
                 return conv(
                     {2, 6, 17, 15}, {9, 6, 3, 3},
                     attrs({{"pads", V{0, 1, 2, 1}}, {"strides", V{2, 2}}, {"dilations", V{2, 1}}}),
                     true, "Relu");
               }});
  c.push_back({"ConvGrouped", [] {
                 return conv({1, 8, 9, 9}, {12, 4, 3, 3},
                             attrs({{"pads", V{1, 1, 1, 1}}, {"group", int64_t{2}}}), true, "Clip");
               }});
  c.push_back({"Conv1x1Large", [] {
                 return conv({1, 96, 14, 14}, {80, 96, 1, 1}, {}, true, "HardSwish");
               }});
  c.push_back({"Conv7x7Stride2", [] {
                 return conv({1, 3, 32, 32}, {16, 3, 7, 7},
                             attrs({{"pads", V{3, 3, 3, 3}}, {"strides", V{2, 2}}}), false,
                             "Sigmoid");
               }});
  c.push_back({"DepthwiseMultiplier2", [] {
                 return conv(
                     {1, 6, 10, 9}, {12, 1, 5, 5},
                     attrs({{"pads", V{2, 2, 2, 2}}, {"group", int64_t{6}}, {"strides", V{2, 1}}}),
                     true, "Relu");
               }});
  // A residual Add in the conv's epilogue (the shortcut is computed first), then its Relu.
  c.push_back({"ConvResidualAddRelu", [] {
                 return GraphBuilder()
                     .input("x", {1, 8, 9, 7})
                     .constant("w", random_tensor({8, 8, 3, 3}, 5))
                     .constant("b", random_tensor({8}, 6))
                     .node("Relu", {"x"}, {"shortcut"})
                     .node("Conv", {"x", "w", "b"}, {"c"}, attrs({{"pads", V{1, 1, 1, 1}}}))
                     .node("Add", {"shortcut", "c"}, {"s"})
                     .node("Relu", {"s"}, {"y"})
                     .output("y")
                     .build();
               }});
  // The shortcut is computed after the conv: the Add runs on its own.
  c.push_back({"ConvResidualLaterBranch", [] {
                 return GraphBuilder()
                     .input("x", {1, 4, 6, 6})
                     .constant("w", random_tensor({4, 4, 1, 1}, 8))
                     .node("Conv", {"x", "w"}, {"c"})
                     .node("Sigmoid", {"x"}, {"shortcut"})
                     .node("Add", {"c", "shortcut"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"GemmTransBBias", [] {
                 return GraphBuilder()
                     .input("x", {3, 70})
                     .constant("w", random_tensor({33, 70}, 3))
                     .constant("b", random_tensor({33}, 4))
                     .node("Gemm", {"x", "w", "b"}, {"y"},
                           attrs({{"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}}))
                     .output("y")
                     .build();
               }});
  c.push_back({"GemmTransAMatrixC", [] {
                 return GraphBuilder()
                     .input("a", {19, 65})
                     .input("b", {19, 66})
                     .input("c", {65, 66})
                     .node("Gemm", {"a", "b", "c"}, {"y"}, attrs({{"transA", int64_t{1}}}))
                     .output("y")
                     .build();
               }});
  c.push_back({"MatMulBatched", [] {
                 return GraphBuilder()
                     .input("a", {2, 3, 17, 19})
                     .input("b", {2, 3, 19, 23})
                     .node("MatMul", {"a", "b"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"MatMulBroadcastBatch", [] {
                 return GraphBuilder()
                     .input("a", {2, 1, 5, 7})
                     .input("b", {3, 7, 4})
                     .node("MatMul", {"a", "b"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"MaxPool3x3s2Pad", [] {
                 return GraphBuilder()
                     .input("x", {1, 4, 15, 14})
                     .node("MaxPool", {"x"}, {"y"},
                           attrs({{"kernel_shape", V{3, 3}},
                                  {"strides", V{2, 2}},
                                  {"pads", V{1, 1, 1, 1}},
                                  {"ceil_mode", int64_t{1}}}))
                     .output("y")
                     .build();
               }});
  for (int64_t include : {0, 1}) {
    c.push_back({"AveragePoolCountPad" + std::to_string(include), [include] {
                   return GraphBuilder()
                       .input("x", {2, 3, 9, 8})
                       .node("AveragePool", {"x"}, {"y"},
                             attrs({{"kernel_shape", V{3, 3}},
                                    {"strides", V{2, 2}},
                                    {"pads", V{1, 1, 1, 1}},
                                    {"count_include_pad", include}}))
                       .output("y")
                       .build();
                 }});
  }
  c.push_back({"GlobalAveragePoolLargePlane", [] {
                 return GraphBuilder()
                     .input("x", {1, 5, 57, 55})
                     .node("GlobalAveragePool", {"x"}, {"y"})
                     .output("y")
                     .build();
               }});
  // output_shape beyond what the taps reach (negative begin pads, which core leaves to the
  // plugin), groups, dilation, bias and a Relu in the epilogue.
  c.push_back({"ConvTransposeOutputShapeBeyondFullRelu", [] {
                 return GraphBuilder()
                     .input("x", {1, 4, 3, 5})
                     .constant("w", random_tensor({4, 3, 3, 2}, 13))
                     .constant("b", random_tensor({6}, 14))
                     .node("ConvTranspose", {"x", "w", "b"}, {"c"},
                           attrs({{"group", int64_t{2}},
                                  {"strides", V{2, 3}},
                                  {"dilations", V{1, 2}},
                                  {"output_shape", V{9, 18}}}))
                     .node("Relu", {"c"}, {"y"})
                     .output("y")
                     .build();
               }});
  // Rank 5, repeats on four axes: ten axes to walk, six once neighbours are merged.
  c.push_back({"TileRank5Merged", [] {
                 return GraphBuilder()
                     .input("x", {2, 3, 1, 4, 5})
                     .constant("r", Tensor::from_vector({5}, std::vector<int64_t>{1, 2, 3, 1, 2}))
                     .node("Tile", {"x", "r"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"SoftmaxAxis1", [] {
                 return GraphBuilder()
                     .input("x", {2, 300, 3})
                     .node("Softmax", {"x"}, {"y"}, attrs({{"axis", int64_t{1}}}))
                     .output("y")
                     .build();
               }});
  c.push_back({"ConcatThree", [] {
                 return GraphBuilder()
                     .input("a", {1, 3, 4, 5})
                     .input("b", {1, 6, 4, 5})
                     .input("c", {1, 1, 4, 5})
                     .node("Concat", {"a", "b", "c"}, {"y"}, attrs({{"axis", int64_t{1}}}))
                     .output("y")
                     .build();
               }});
  c.push_back({"BatchNormRelu", [] {
                 return GraphBuilder()
                     .input("x", {2, 7, 5, 6})
                     .constant("s", random_tensor({7}, 1))
                     .constant("b", random_tensor({7}, 2))
                     .constant("m", random_tensor({7}, 3))
                     .constant("v", positive_tensor({7}, 4))
                     .node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"n"})
                     .node("Relu", {"n"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"FlattenGemmChain", [] {
                 return GraphBuilder()
                     .input("x", {1, 8, 3, 3})
                     .constant("w", random_tensor({10, 72}, 9))
                     .node("Flatten", {"x"}, {"f"})
                     .node("Gemm", {"f", "w"}, {"g"}, attrs({{"transB", int64_t{1}}}))
                     .node("Relu", {"g"}, {"y"})
                     .output("y")
                     .build();
               }});
  // 4.3 M elements: more work-groups than one row of 65535 holds (linear_id's second row).
  c.push_back({"AddBeyondOneDispatchRow", [] {
                 return GraphBuilder()
                     .input("a", {1, 64, 260, 260})
                     .input("b", {1, 64, 1, 1})
                     .node("Add", {"a", "b"}, {"s"})
                     .node("Relu", {"s"}, {"y"})
                     .output("y")
                     .build();
               }});
  return c;
}

class VulkanOpsTest : public ::testing::TestWithParam<OpCase> {};

// gtest prints a parameter it cannot format as its bytes: name the case instead.
void PrintTo(const OpCase& c, std::ostream* os) {
  *os << c.name;
}

TEST_P(VulkanOpsTest, MatchesReference) {
  TESSERA_REQUIRE_VULKAN();
  const Graph graph = GetParam().build();
  const SessionOptions options = vulkan_options();
  Session session(graph, options, vulkan_host());
  for (const NodePlacement& p : session.plan().nodes) {
    ASSERT_EQ(p.plugin, "vulkan") << p.node << ": " << p.reason;
  }
  const auto inputs = random_inputs(graph, 7);
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(graph, inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].shape(), want[o].shape());
    const float* g = got[o].data<float>();
    const float* w = want[o].data<float>();
    // fp32 sums in another order: relative 1e-4 of the magnitude plus a small absolute term.
    int64_t wrong = 0, first = -1, last = -1;
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      if (!(std::fabs(g[i] - w[i]) <= 1e-4 * (1.0 + std::fabs(w[i])))) {
        if (first < 0) first = i;
        last = i;
        ++wrong;
      }
    }
    EXPECT_EQ(wrong, 0) << GetParam().name << " output " << o << ": elements " << first << " to "
                        << last << " of " << want[o].numel() << " differ, e.g. got "
                        << (first >= 0 ? g[first] : 0.0f) << " want "
                        << (first >= 0 ? w[first] : 0.0f);
  }
}

INSTANTIATE_TEST_SUITE_P(vulkan, VulkanOpsTest, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) {
                           return info.param.name;
                         });

// max |a - b| over every element of every output.
float max_difference(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  float m = 0.0f;
  for (size_t o = 0; o < a.size(); ++o) {
    for (int64_t i = 0; i < a[o].numel(); ++i) {
      m = std::max(m, std::fabs(a[o].data<float>()[i] - b[o].data<float>()[i]));
    }
  }
  return m;
}

float max_magnitude(const std::vector<Tensor>& a) {
  float m = 0.0f;
  for (const Tensor& t : a) {
    for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::fabs(t.data<float>()[i]));
  }
  return m;
}

std::vector<Tensor> run_vulkan(const Graph& graph, const std::map<std::string, Tensor>& inputs,
                               const std::string& precision) {
  SessionOptions options = vulkan_options();
  options.precision = precision;
  Session session(graph, options, vulkan_host());
  return session.run(inputs);
}

// The same cases in half storage with fp32 arithmetic (fp16-acc32) and with half products and
// sums in conv and matmul (fp16): within 1% (fp16-acc32) or 4% (fp16) of the outputs' largest
// magnitude from the reference kernels' fp32 results (half has an 11-bit significand).
class VulkanHalfTest : public ::testing::TestWithParam<std::tuple<OpCase, std::string>> {};

TEST_P(VulkanHalfTest, WithinHalfPrecisionOfTheReference) {
  TESSERA_REQUIRE_VULKAN();
  const auto& [c, precision] = GetParam();
  const Graph graph = c.build();
  const auto inputs = random_inputs(graph, 7);
  const std::vector<Tensor> got = run_vulkan(graph, inputs, precision);
  const std::vector<Tensor> want = run_reference(graph, inputs);
  const float tolerance = precision == "fp16" ? 0.04f : 0.01f;
  EXPECT_LE(max_difference(got, want), tolerance * (1.0f + max_magnitude(want)))
      << c.name << " at " << precision;
}

INSTANTIATE_TEST_SUITE_P(vulkan, VulkanHalfTest,
                         ::testing::Combine(::testing::ValuesIn(cases()),
                                            ::testing::Values("fp16-acc32", "fp16")),
                         [](const ::testing::TestParamInfo<std::tuple<OpCase, std::string>>& info) {
                           std::string p = std::get<1>(info.param);
                           for (char& ch : p) ch = ch == '-' ? '_' : ch;
                           return std::get<0>(info.param).name + "_" + p;
                         });

// fp16 accumulates a long dot product in half, fp16-acc32 in float: on K = 4096 (normal inputs,
// sums of magnitude ~64) the fp16 result is measurably further from the fp32 reference.
TEST(VulkanHalfPrecision, Fp16ArithmeticDiffersFromFp32Accumulation) {
  TESSERA_REQUIRE_VULKAN();
  const Graph graph = GraphBuilder()
                          .input("a", {8, 4096})
                          .input("b", {4096, 8})
                          .node("MatMul", {"a", "b"}, {"y"})
                          .output("y")
                          .build();
  const auto inputs = random_inputs(graph, 1);
  const std::vector<Tensor> want = run_reference(graph, inputs);
  const float acc32 = max_difference(run_vulkan(graph, inputs, "fp16-acc32"), want);
  const float fp16 = max_difference(run_vulkan(graph, inputs, "fp16"), want);
  const float scale = max_magnitude(want);
  EXPECT_LE(acc32, 2e-3f * scale);
  EXPECT_GT(fp16, 2.0f * acc32) << "fp16 " << fp16 << ", fp16-acc32 " << acc32;
  EXPECT_LE(fp16, 0.05f * scale) << "fp16 " << fp16 << ", fp16-acc32 " << acc32;
}

}  // namespace
}  // namespace tessera::test
