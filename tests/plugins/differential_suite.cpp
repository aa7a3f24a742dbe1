// Cases and the test body of the shared differential suite (see differential_suite.hpp).
#include "differential_suite.hpp"

#include <cmath>
#include <cstring>

#include "graph_builder.hpp"
#include "tessera/reference_runner.hpp"
#include "tessera/session.hpp"
#include "test_requirements.hpp"

namespace tessera::test {
namespace {

Graph unary(const std::string& op, Shape shape, Attributes a = {}, int64_t opset = 13) {
  return GraphBuilder(opset).input("x", shape).node(op, {"x"}, {"y"}, a).output("y").build();
}

Graph binary(const std::string& op, Shape a, Shape b) {
  return GraphBuilder().input("a", a).input("b", b).node(op, {"a", "b"}, {"y"}).output("y").build();
}

Graph conv(Shape x, Shape w, Attributes a, bool bias) {
  GraphBuilder b;
  b.input("x", x).constant("w", random_tensor(w, 11));
  if (bias) b.constant("bias", random_tensor({w[0]}, 12));
  return b.node("Conv", {"x", "w", bias ? "bias" : ""}, {"y"}, a).output("y").build();
}

Tensor ints(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<int64_t>({n}, std::move(v));
}

Tensor scalar(float v) {
  return Tensor::from_vector<float>({}, {v});
}

// A QDQ conv block as an ONNX file has it (ONNX Runtime's oracle input): the input's
// QuantizeLinear / DequantizeLinear, weights stored as int8 with per-channel scales, the conv and
// Relu, then the activation's pair.
Graph qdq_conv_block() {
  using V = std::vector<int64_t>;
  std::vector<int8_t> w(8 * 3 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>((i * 37) % 255 - 127);
  Graph g =
      GraphBuilder()
          .input("x", {1, 3, 9, 9})
          .constant("sx", scalar(0.01f))
          .constant("zx", Tensor::from_vector<uint8_t>({}, {128}))
          .constant("wq", Tensor::from_vector<int8_t>({8, 3, 3, 3}, w))
          .constant("sw", Tensor::from_vector<float>({8}, {0.01f, 0.002f, 0.005f, 0.02f,
                                                           0.007f, 0.004f, 0.012f, 0.003f}))
          .constant("sy", scalar(0.02f))
          .constant("zy", Tensor::from_vector<uint8_t>({}, {0}))
          .node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"})
          .node("DequantizeLinear", {"xq", "sx", "zx"}, {"xd"})
          .node("DequantizeLinear", {"wq", "sw"}, {"wd"}, attrs({{"axis", int64_t{0}}}))
          .node("Conv", {"xd", "wd"}, {"c"}, attrs({{"pads", V{1, 1, 1, 1}}}))
          .node("Relu", {"c"}, {"r"})
          .node("QuantizeLinear", {"r", "sy", "zy"}, {"rq"})
          .node("DequantizeLinear", {"rq", "sy", "zy"}, {"y"})
          .output("y")
          .build();
  return g;
}

Graph prepared(Graph g) {
  prepare_graph(g);
  return g;
}

// The ops and patterns of exported torchvision / timm networks: activations of modern mobile
// nets, broadcasting, squeeze-excitation, channel shuffle, LayerNorm, attention, segmentation
// heads.
void add_modern_network_cases(std::vector<DifferentialCase>* out) {
  using V = std::vector<int64_t>;
  std::vector<DifferentialCase>& c = *out;
  for (const char* op : {"HardSigmoid", "Tanh", "Erf", "Exp", "Neg", "Abs", "Floor", "Ceil",
                         "LeakyRelu", "Elu", "Selu", "Softplus"}) {
    c.push_back({std::string("Unary") + op, [op] { return unary(op, {2, 3, 5, 7}); }});
  }
  // HardSwish exists from opset 14; ONNX Runtime refuses it in an older model.
  c.push_back({"UnaryHardSwish", [] { return unary("HardSwish", {2, 3, 5, 7}, {}, 14); }});
  // Mish exists from opset 18; core refuses it in an older model, as ONNX Runtime does.
  c.push_back({"UnaryMish", [] { return unary("Mish", {2, 3, 5, 7}, {}, 18); }});
  // Trigonometry (sinusoidal timestep and position embeddings computed at run time) and the
  // rarer activations, each at the opset its attributes took their present form.
  for (const char* op : {"Sin", "Cos", "Tan", "Atan", "Sign", "Round", "Softsign"}) {
    c.push_back({std::string("Unary") + op, [op] { return unary(op, {2, 3, 5, 7}); }});
  }
  c.push_back({"UnaryCelu", [] {
                 Attributes a;
                 a.set("alpha", 0.7f);
                 return unary("Celu", {3, 4, 9}, a, 12);
               }});
  c.push_back({"UnaryThresholdedRelu", [] {
                 Attributes a;
                 a.set("alpha", 0.25f);
                 return unary("ThresholdedRelu", {3, 4, 9}, a, 10);
               }});
  c.push_back({"UnaryShrink", [] {
                 Attributes a;
                 a.set("lambd", 0.3f);
                 a.set("bias", 0.1f);
                 return unary("Shrink", {3, 4, 9}, a, 9);
               }});
  // Log, Sqrt and Reciprocal of |x| + 0.5: finite everywhere.
  for (const char* op : {"Log", "Sqrt", "Reciprocal"}) {
    c.push_back({std::string("Unary") + op, [op] {
                   return GraphBuilder()
                       .input("x", {3, 40})
                       .constant("half", scalar(0.5f))
                       .node("Abs", {"x"}, {"a"})
                       .node("Add", {"a", "half"}, {"p"})
                       .node(op, {"p"}, {"y"})
                       .output("y")
                       .build();
                 }});
  }
  c.push_back({"SubBroadcastRow", [] { return binary("Sub", {2, 3, 17}, {17}); }});
  c.push_back({"DivPerChannel", [] {
                 return GraphBuilder()
                     .input("x", {2, 4, 5, 5})
                     .constant("s", Tensor::from_vector<float>({4, 1, 1}, {2.f, -4.f, 0.5f, 8.f}))
                     .node("Div", {"x", "s"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"MulBothBroadcast", [] { return binary("Mul", {3, 1, 6}, {1, 4, 1}); }});
  c.push_back({"MaxBroadcast", [] { return binary("Max", {2, 3, 4}, {3, 1}); }});
  c.push_back({"MinSameShape", [] { return binary("Min", {5, 9}, {5, 9}); }});
  c.push_back({"PowSquare", [] {
                 return GraphBuilder()
                     .input("x", {4, 9})
                     .constant("two", scalar(2.0f))
                     .node("Pow", {"x", "two"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"PRelu", [] {
                 return GraphBuilder()
                     .input("x", {1, 3, 4, 4})
                     .constant("slope", Tensor::from_vector<float>({3, 1, 1}, {0.1f, 0.2f, 0.3f}))
                     .node("PRelu", {"x", "slope"}, {"y"})
                     .output("y")
                     .build();
               }});
  // Conv + SiLU (Sigmoid and Mul both read the conv), as timm and torchvision export it.
  c.push_back({"ConvSiLU", [] {
                 return GraphBuilder()
                     .input("x", {1, 4, 9, 9})
                     .constant("w", random_tensor({8, 4, 3, 3}, 41))
                     .node("Conv", {"x", "w"}, {"c"}, attrs({{"pads", V{1, 1, 1, 1}}}))
                     .node("Sigmoid", {"c"}, {"s"})
                     .node("Mul", {"c", "s"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"SiLUAlone", [] {
                 return GraphBuilder()
                     .input("x", {2, 50})
                     .node("Sigmoid", {"x"}, {"s"})
                     .node("Mul", {"s", "x"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"DepthwiseSiLU", [] {
                 return GraphBuilder()
                     .input("x", {1, 16, 14, 14})
                     .constant("w", random_tensor({16, 1, 3, 3}, 51))
                     .node("Conv", {"x", "w"}, {"c"},
                           attrs({{"pads", V{1, 1, 1, 1}}, {"group", int64_t{16}}}))
                     .node("Sigmoid", {"c"}, {"s"})
                     .node("Mul", {"s", "c"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"Pointwise1x1HardSwish", [] {
                 return GraphBuilder(14)
                     .input("x", {1, 24, 20, 20})
                     .constant("w", random_tensor({40, 24, 1, 1}, 52))
                     .node("Conv", {"x", "w"}, {"c"})
                     .node("HardSwish", {"c"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"MatMulTanh", [] {
                 return GraphBuilder()
                     .input("x", {3, 7, 20})
                     .constant("w", random_tensor({20, 33}, 53))
                     .node("MatMul", {"x", "w"}, {"m"})
                     .node("Tanh", {"m"}, {"y"})
                     .output("y")
                     .build();
               }});
  // GELU as PyTorch exports it before opset 20: Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5).
  c.push_back({"MatMulGeluErfChain", [] {
                 return GraphBuilder()
                     .input("x", {2, 6, 16})
                     .constant("w", random_tensor({16, 24}, 54))
                     .constant("sqrt2", scalar(1.4142135623730951f))
                     .constant("one", scalar(1.0f))
                     .constant("half", scalar(0.5f))
                     .node("MatMul", {"x", "w"}, {"m"})
                     .node("Div", {"m", "sqrt2"}, {"d"})
                     .node("Erf", {"d"}, {"e"})
                     .node("Add", {"e", "one"}, {"a"})
                     .node("Mul", {"m", "a"}, {"p"})
                     .node("Mul", {"p", "half"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"ConvHardSwish", [] {
                 return GraphBuilder(14)
                     .input("x", {1, 3, 10, 10})
                     .constant("w", random_tensor({6, 3, 3, 3}, 42))
                     .constant("b", random_tensor({6}, 43))
                     .node("Conv", {"x", "w", "b"}, {"c"},
                           attrs({{"pads", V{1, 1, 1, 1}}, {"strides", V{2, 2}}}))
                     .node("HardSwish", {"c"}, {"y"})
                     .output("y")
                     .build();
               }});
  // Squeeze-excitation: pooled scales through two 1x1 convs and a gate, multiplied back.
  c.push_back({"SqueezeExcitation", [] {
                 return GraphBuilder()
                     .input("x", {2, 8, 6, 6})
                     .constant("w1", random_tensor({4, 8, 1, 1}, 44))
                     .constant("b1", random_tensor({4}, 45))
                     .constant("w2", random_tensor({8, 4, 1, 1}, 46))
                     .constant("b2", random_tensor({8}, 47))
                     .node("GlobalAveragePool", {"x"}, {"p"})
                     .node("Conv", {"p", "w1", "b1"}, {"f1"})
                     .node("Relu", {"f1"}, {"r"})
                     .node("Conv", {"r", "w2", "b2"}, {"f2"})
                     .node("HardSigmoid", {"f2"}, {"g"},
                           attrs({{"alpha", 1.0f / 6.0f}, {"beta", 0.5f}}))
                     .node("Mul", {"x", "g"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"ReduceMeanSpatial", [] {
                 return unary("ReduceMean", {2, 6, 5, 7},
                              attrs({{"axes", V{2, 3}}, {"keepdims", int64_t{1}}}));
               }});
  c.push_back({"ReduceMeanLastAxis", [] {
                 return unary("ReduceMean", {3, 4, 33}, attrs({{"axes", V{-1}}}));
               }});
  c.push_back(
      {"ReduceMaxMiddleAxis", [] {
         return unary("ReduceMax", {2, 5, 6}, attrs({{"axes", V{1}}, {"keepdims", int64_t{0}}}));
       }});
  c.push_back({"ReduceSumAll", [] { return unary("ReduceSum", {4, 5, 3}); }});
  // L1, sum of squares and log-sum-exp (core had no kernels for them, so no model reached cpu's),
  // over trailing axes; log-sum-exp with inputs large enough that a plain e^x would overflow.
  c.push_back({"ReduceL1Spatial", [] {
                 return unary("ReduceL1", {2, 6, 5, 7}, attrs({{"axes", V{2, 3}}}));
               }});
  c.push_back({"ReduceSumSquareLastAxis", [] {
                 return unary("ReduceSumSquare", {3, 4, 33},
                              attrs({{"axes", V{-1}}, {"keepdims", int64_t{0}}}));
               }});
  // F.normalize(x, dim=-1) as exporters write it: the L2 norm of the trailing axis, then a
  // broadcast division.
  c.push_back({"ReduceL2NormalizeLastAxis", [] {
                 return GraphBuilder()
                     .input("x", {2, 3, 4, 9})
                     .node("ReduceL2", {"x"}, {"n"},
                           attrs({{"axes", V{-1}}, {"keepdims", int64_t{1}}}))
                     .node("Div", {"x", "n"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back(
      {"ReduceL2TrailingTwoAxesNoKeep", [] {
         return unary("ReduceL2", {3, 4, 5}, attrs({{"axes", V{1, 2}}, {"keepdims", int64_t{0}}}));
       }});
  // Constant index tensors (dynamo exports as_strided this way), negative indices included.
  c.push_back({"GatherIndexMatrixAxis1", [] {
                 return GraphBuilder()
                     .input("x", {4, 6, 3})
                     .constant("i", Tensor::from_vector<int64_t>({2, 3}, {0, 5, -1, 2, 2, -6}))
                     .node("Gather", {"x", "i"}, {"y"}, attrs({{"axis", int64_t{1}}}))
                     .output("y")
                     .build();
               }});
  c.push_back({"GatherFlatIndices", [] {
                 return GraphBuilder()
                     .input("x", {24})
                     .constant("i", Tensor::from_vector<int64_t>(
                                        {2, 2, 3}, {0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14}))
                     .node("Gather", {"x", "i"}, {"y"})
                     .output("y")
                     .build();
               }});
  // Autocast's .float() on a float tensor: an identity.
  c.push_back({"CastFloatToFloat", [] {
                 return GraphBuilder()
                     .input("x", {2, 3, 5})
                     .node("Relu", {"x"}, {"r"})
                     .node("Cast", {"r"}, {"y"}, attrs({{"to", int64_t{1}}}))
                     .output("y")
                     .build();
               }});
  // Swin's shifted-window attention: scores [B, nW, heads, N, N] plus a mask [1, nW, 1, N, N]
  // (rank 5; 4 dims once the contiguous N x N is merged).
  c.push_back({"AddRank5AttentionMask", [] {
                 return GraphBuilder()
                     .input("s", {2, 3, 4, 5, 5})
                     .input("m", {1, 3, 1, 5, 5})
                     .node("Add", {"s", "m"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"ReduceLogSumOuterAndInnerAxes", [] {
                 return GraphBuilder()
                     .input("x", {3, 4, 5})
                     .constant("floor", scalar(0.1f))
                     .node("Abs", {"x"}, {"a"})
                     .node("Add", {"a", "floor"}, {"p"})
                     .node("ReduceLogSum", {"p"}, {"y"},
                           attrs({{"axes", V{0, 2}}, {"keepdims", int64_t{0}}}))
                     .output("y")
                     .build();
               }});
  c.push_back({"ReduceLogSumExpLarge", [] {
                 return GraphBuilder()
                     .input("x", {3, 5, 8})
                     .constant("big", scalar(100.0f))
                     .node("Mul", {"x", "big"}, {"m"})
                     .node("ReduceLogSumExp", {"m"}, {"y"}, attrs({{"axes", V{-1}}}))
                     .output("y")
                     .build();
               }});
  // Products of values near 1 (x / 8 + 1), over the last axis (contiguous runs: both vector
  // accumulators and a tail) and over a middle one (rows combined row by row).
  for (const auto& [name, axes] :
       {std::pair{"ReduceProdLastAxis", V{-1}}, std::pair{"ReduceProdMiddleAxis", V{1}}}) {
    c.push_back({name, [axes = axes] {
                   return GraphBuilder()
                       .input("x", {3, 7, 37})
                       .constant("eighth", scalar(0.125f))
                       .constant("one", scalar(1.0f))
                       .node("Mul", {"x", "eighth"}, {"s"})
                       .node("Add", {"s", "one"}, {"p"})
                       .node("ReduceProd", {"p"}, {"y"}, attrs({{"axes", axes}}))
                       .output("y")
                       .build();
                 }});
  }
  // Axes that are not adjacent: gathered with the kept axes first, then reduced.
  c.push_back({"ReduceMeanBatchAndWidth", [] {
                 return unary("ReduceMean", {3, 4, 5, 6}, attrs({{"axes", V{0, 3}}}));
               }});
  c.push_back({"ReduceMaxChannelsAndWidth", [] {
                 return unary("ReduceMax", {2, 5, 3, 9},
                              attrs({{"axes", V{1, -1}}, {"keepdims", int64_t{0}}}));
               }});
  c.push_back({"ReduceLogSumExpAlternateAxes", [] {
                 return unary("ReduceLogSumExp", {4, 3, 5, 2}, attrs({{"axes", V{0, 2}}}));
               }});
  // Log of sums of |x| + 0.5 (positive), spatial axes then the channel axis.
  for (const auto& [name, axes] :
       {std::pair{"ReduceLogSumSpatial", V{2, 3}}, std::pair{"ReduceLogSumChannels", V{1}}}) {
    c.push_back({name, [axes = axes] {
                   return GraphBuilder()
                       .input("x", {2, 6, 5, 7})
                       .constant("half", scalar(0.5f))
                       .node("Abs", {"x"}, {"a"})
                       .node("Add", {"a", "half"}, {"p"})
                       .node("ReduceLogSum", {"p"}, {"y"}, attrs({{"axes", axes}}))
                       .output("y")
                       .build();
                 }});
  }
  c.push_back({"ChannelShuffle", [] {
                 return GraphBuilder()
                     .input("x", {1, 8, 5, 5})
                     .constant("s1", ints({1, 2, 4, 5, 5}))
                     .constant("s2", ints({1, 8, 5, 5}))
                     .node("Reshape", {"x", "s1"}, {"r"})
                     .node("Transpose", {"r"}, {"t"}, attrs({{"perm", V{0, 2, 1, 3, 4}}}))
                     .node("Reshape", {"t", "s2"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"TransposeToChannelsLast", [] {
                 return unary("Transpose", {2, 3, 4, 5}, attrs({{"perm", V{0, 2, 3, 1}}}));
               }});
  c.push_back({"SliceSteps", [] {
                 return GraphBuilder()
                     .input("x", {2, 6, 9})
                     .constant("starts", ints({1, 8}))
                     .constant("ends", ints({5, 0}))
                     .constant("axes", ints({1, 2}))
                     .constant("steps", ints({2, -3}))
                     .node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"SplitChannels", [] {
                 return GraphBuilder()
                     .input("x", {1, 6, 3, 3})
                     .constant("split", ints({2, 4}))
                     .node("Split", {"x", "split"}, {"a", "b"}, attrs({{"axis", int64_t{1}}}))
                     .output("a")
                     .output("b")
                     .build();
               }});
  c.push_back({"GatherClassToken", [] {
                 return GraphBuilder()
                     .input("x", {2, 5, 8})
                     .constant("i", Tensor::from_vector<int64_t>({}, {0}))
                     .node("Gather", {"x", "i"}, {"y"}, attrs({{"axis", int64_t{1}}}))
                     .output("y")
                     .build();
               }});
  c.push_back({"PadReflect", [] {
                 return GraphBuilder()
                     .input("x", {1, 2, 5, 6})
                     .constant("pads", ints({0, 0, 2, 1, 0, 0, 1, 3}))
                     .node("Pad", {"x", "pads"}, {"y"}, attrs({{"mode", std::string("reflect")}}))
                     .output("y")
                     .build();
               }});
  c.push_back({"PadConstant", [] {
                 return GraphBuilder()
                     .input("x", {1, 2, 4, 4})
                     .constant("pads", ints({0, 1, 1, 0, 0, 0, 2, 2}))
                     .constant("v", scalar(0.25f))
                     .node("Pad", {"x", "pads", "v"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"ExpandRows", [] {
                 return GraphBuilder()
                     .input("x", {3, 1})
                     .constant("shape", ints({2, 3, 6}))
                     .node("Expand", {"x", "shape"}, {"y"})
                     .output("y")
                     .build();
               }});
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    c.push_back({std::string("Resize2x_") + mode, [mode] {
                   return GraphBuilder()
                       .input("x", {1, 3, 5, 7})
                       .constant("roi", Tensor::from_vector<float>({0}, {}))
                       .constant("scales", Tensor::from_vector<float>({4}, {1.f, 1.f, 2.f, 2.f}))
                       .node("Resize", {"x", "roi", "scales"}, {"y"},
                             attrs({{"mode", std::string(mode)}}))
                       .output("y")
                       .build();
                 }});
  }
  c.push_back({"ResizeAlignCornersSizes", [] {
                 return GraphBuilder()
                     .input("x", {1, 2, 6, 6})
                     .constant("roi", Tensor::from_vector<float>({0}, {}))
                     .constant("scales", Tensor::from_vector<float>({0}, {}))
                     .constant("sizes", ints({1, 2, 11, 4}))
                     .node(
                         "Resize", {"x", "roi", "scales", "sizes"}, {"y"},
                         attrs({{"mode", std::string("linear")},
                                {"coordinate_transformation_mode", std::string("align_corners")}}))
                     .output("y")
                     .build();
               }});
  // Linear with rows upsampled (each source row interpolated along x once, then rows blended)
  // and with rows downsampled (each output row from its two source rows).
  for (const auto& [name, h, w, oh, ow] :
       std::vector<std::tuple<const char*, int64_t, int64_t, int64_t, int64_t>>{
           {"ResizeLinearRowsUp3xColsDown", 5, 9, 15, 4},
           {"ResizeLinearRowsDownColsUp", 9, 5, 4, 13}}) {
    c.push_back(
        {name, [h = h, w = w, oh = oh, ow = ow] {
           return GraphBuilder()
               .input("x", {2, 3, h, w})
               .constant("roi", Tensor::from_vector<float>({0}, {}))
               .constant("scales", Tensor::from_vector<float>({0}, {}))
               .constant("sizes", ints({2, 3, oh, ow}))
               .node("Resize", {"x", "roi", "scales", "sizes"}, {"y"},
                     attrs({{"mode", std::string("linear")},
                            {"coordinate_transformation_mode", std::string("pytorch_half_pixel")}}))
               .output("y")
               .build();
         }});
  }
  // A ViT's position-embedding grid resized bicubically (crossvit), downsampling with
  // exclude_outside and PyTorch's a = -0.75, and align_corners with TensorFlow's a = -0.5.
  c.push_back({"ResizeCubicExcludeOutsideSizes", [] {
                 return GraphBuilder()
                     .input("x", {1, 3, 14, 9})
                     .constant("roi", Tensor::from_vector<float>({0}, {}))
                     .constant("scales", Tensor::from_vector<float>({0}, {}))
                     .constant("sizes", ints({1, 3, 8, 15}))
                     .node("Resize", {"x", "roi", "scales", "sizes"}, {"y"},
                           attrs({{"mode", std::string("cubic")}, {"exclude_outside", int64_t{1}}}))
                     .output("y")
                     .build();
               }});
  c.push_back({"ResizeCubicAlignCorners", [] {
                 return GraphBuilder()
                     .input("x", {2, 2, 5, 6})
                     .constant("roi", Tensor::from_vector<float>({0}, {}))
                     .constant("scales", Tensor::from_vector<float>({0}, {}))
                     .constant("sizes", ints({2, 2, 9, 7}))
                     .node(
                         "Resize", {"x", "roi", "scales", "sizes"}, {"y"},
                         attrs({{"mode", std::string("cubic")},
                                {"cubic_coeff_a", -0.5f},
                                {"coordinate_transformation_mode", std::string("align_corners")}}))
                     .output("y")
                     .build();
               }});
  // Einsum as attention writes it (lowered to Transpose / MatMul by core), mvitv2's
  // relative-position term against a constant, and ScatterND writing rows into a score tensor.
  // In-memory graphs skip import's preparation; these run it, as an imported model would.
  c.push_back({"EinsumAttentionScores", [] {
                 return prepared(GraphBuilder(13)
                                     .input("q", {2, 3, 5, 8})
                                     .input("k", {2, 3, 6, 8})
                                     .node("Einsum", {"q", "k"}, {"y"},
                                           attrs({{"equation", std::string("bhid,bhjd->bhij")}}))
                                     .output("y")
                                     .build());
               }});
  c.push_back({"EinsumRelativePosition", [] {
                 return prepared(GraphBuilder(13)
                                     .input("x", {2, 3, 4, 5, 6})
                                     .constant("r", random_tensor({4, 7, 6}, 60))
                                     .node("Einsum", {"x", "r"}, {"y"},
                                           attrs({{"equation", std::string("byhwc,hkc->byhwk")}}))
                                     .output("y")
                                     .build());
               }});
  c.push_back({"ScatterNDRows", [] {
                 return GraphBuilder(13)
                     .input("x", {2, 4, 6})
                     .input("u", {3, 6})
                     .constant("idx", Tensor::from_vector<int64_t>({3, 2}, {0, 1, 1, 3, -1, 0}))
                     .node("Relu", {"x"}, {"r"})
                     .node("ScatterND", {"r", "idx", "u"}, {"y"})
                     .output("y")
                     .build();
               }});
  // LSTMs as sequence models export them: bidirectional with both biases and initial states
  // and all three outputs; batch-first (layout 1) with peepholes.
  c.push_back({"LstmBidirectionalStates", [] {
                 const int64_t h = 6;
                 return GraphBuilder(14)
                     .input("x", {5, 3, 4})
                     .input("h0", {2, 3, h})
                     .input("c0", {2, 3, h})
                     .constant("w", random_tensor({2, 4 * h, 4}, 61))
                     .constant("r", random_tensor({2, 4 * h, h}, 62))
                     .constant("b", random_tensor({2, 8 * h}, 63))
                     .node("LSTM", {"x", "w", "r", "b", "", "h0", "c0"}, {"y", "yh", "yc"},
                           attrs({{"direction", std::string("bidirectional")}, {"hidden_size", h}}))
                     .output("y")
                     .output("yh")
                     .output("yc")
                     .build();
               }});
  c.push_back({"LstmBatchFirstPeepholes", [] {
                 const int64_t h = 17;
                 return GraphBuilder(14)
                     .input("x", {2, 7, 9})
                     .constant("w", random_tensor({1, 4 * h, 9}, 64))
                     .constant("r", random_tensor({1, 4 * h, h}, 65))
                     .constant("b", random_tensor({1, 8 * h}, 66))
                     .constant("p", random_tensor({1, 3 * h}, 67))
                     .node("LSTM", {"x", "w", "r", "b", "", "", "", "p"}, {"y", "yh"},
                           attrs({{"layout", int64_t{1}}, {"hidden_size", h}}))
                     .output("y")
                     .output("yh")
                     .build();
               }});
  // Padded batches (sequence_lens: entries end early, the reverse walk starts at each entry's
  // last step) and clipped gate inputs: a bidirectional LSTM with peepholes and states, and a
  // reverse GRU with the reset applied before the product.
  c.push_back({"LstmSequenceLensClipBidirectional", [] {
                 const int64_t h = 7;
                 return GraphBuilder(14)
                     .input("x", {5, 3, 4})
                     .input("h0", {2, 3, h})
                     .input("c0", {2, 3, h})
                     .constant("w", random_tensor({2, 4 * h, 4}, 97))
                     .constant("r", random_tensor({2, 4 * h, h}, 98))
                     .constant("b", random_tensor({2, 8 * h}, 99))
                     .constant("lens", Tensor::from_vector<int32_t>({3}, {3, 1, 5}))
                     .constant("p", random_tensor({2, 3 * h}, 100))
                     .node("LSTM", {"x", "w", "r", "b", "lens", "h0", "c0", "p"}, {"y", "yh", "yc"},
                           attrs({{"direction", std::string("bidirectional")},
                                  {"hidden_size", h},
                                  {"clip", 0.7f}}))
                     .output("y")
                     .output("yh")
                     .output("yc")
                     .build();
               }});
  c.push_back(
      {"GruSequenceLensClipReverse", [] {
         const int64_t h = 9;
         return GraphBuilder(14)
             .input("x", {6, 2, 5})
             .constant("w", random_tensor({1, 3 * h, 5}, 101))
             .constant("r", random_tensor({1, 3 * h, h}, 102))
             .constant("b", random_tensor({1, 6 * h}, 103))
             .constant("lens", Tensor::from_vector<int32_t>({2}, {4, 6}))
             .node(
                 "GRU", {"x", "w", "r", "b", "lens"}, {"y", "yh"},
                 attrs({{"direction", std::string("reverse")}, {"hidden_size", h}, {"clip", 0.4f}}))
             .output("y")
             .output("yh")
             .build();
       }});
  // GRUs: PyTorch's form (linear_before_reset 1), bidirectional with an initial state; and the
  // ONNX default (reset before the product), batch-first.
  for (int64_t lbr : {1, 0}) {
    c.push_back({lbr ? "GruLinearBeforeResetBidirectional" : "GruResetFirstBatchFirst", [lbr] {
                   const int64_t h = 11, d = lbr ? 2 : 1;
                   GraphBuilder b(14);
                   b.input("x", lbr ? Shape{6, 2, 5} : Shape{2, 6, 5})
                       .input("h0", lbr ? Shape{2, 2, h} : Shape{2, 1, h})
                       .constant("w", random_tensor({d, 3 * h, 5}, 68))
                       .constant("r", random_tensor({d, 3 * h, h}, 69))
                       .constant("b", random_tensor({d, 6 * h}, 70));
                   const Attributes a = lbr ? attrs({{"hidden_size", h},
                                                     {"linear_before_reset", lbr},
                                                     {"direction", std::string("bidirectional")}})
                                            : attrs({{"hidden_size", h},
                                                     {"linear_before_reset", lbr},
                                                     {"layout", int64_t{1}}});
                   return b.node("GRU", {"x", "w", "r", "b", "", "h0"}, {"y", "yh"}, a)
                       .output("y")
                       .output("yh")
                       .build();
                 }});
  }
  c.push_back({"LayerNormLastAxis", [] {
                 return GraphBuilder(17)
                     .input("x", {2, 7, 24})
                     .constant("g", random_tensor({24}, 48))
                     .constant("b", random_tensor({24}, 49))
                     .node("LayerNormalization", {"x", "g", "b"}, {"y"},
                           attrs({{"epsilon", 1e-6f}}))
                     .output("y")
                     .build();
               }});
  // LayerNorm2d as timm exports it (ConvNeXt, EdgeNeXt): Transpose to NHWC, LayerNormalization
  // over the channels, Transpose back; odd channel counts and maps that end in a partial vector.
  // Then the NHWC form feeding a MatMul (EdgeNeXt's MLP), and one whose LayerNorm output has a
  // second reader (the Transpose back then runs as its own step).
  auto layer_norm_2d = [](Shape x, bool back, bool second_reader) {
    const int64_t ch = x[1];
    GraphBuilder b(17);
    b.input("x", x)
        .constant("g", random_tensor({ch}, 93))
        .constant("b", random_tensor({ch}, 94))
        .node("Transpose", {"x"}, {"t"}, attrs({{"perm", V{0, 2, 3, 1}}}))
        .node("LayerNormalization", {"t", "g", "b"}, {"n"}, attrs({{"epsilon", 1e-6f}}));
    if (!back) {
      return b.constant("w", random_tensor({ch, 12}, 95))
          .node("MatMul", {"n", "w"}, {"y"})
          .output("y")
          .build();
    }
    b.node("Transpose", {"n"}, {"y"}, attrs({{"perm", V{0, 3, 1, 2}}})).output("y");
    if (second_reader) b.node("Sigmoid", {"n"}, {"s"}).output("s");
    return b.build();
  };
  c.push_back({"LayerNorm2dTransposeBack", [=] {
                 return layer_norm_2d({2, 17, 9, 7}, true, false);
               }});
  c.push_back({"LayerNorm2dWideChannels", [=] {
                 return layer_norm_2d({1, 40, 16, 16}, true, false);
               }});
  c.push_back({"LayerNorm2dNhwcIntoMatMul", [=] {
                 return layer_norm_2d({1, 20, 5, 6}, false, false);
               }});
  c.push_back({"LayerNorm2dSecondReader", [=] {
                 return layer_norm_2d({1, 8, 3, 11}, true, true);
               }});
  c.push_back({"SoftmaxInnerAxis", [] {
                 return unary("Softmax", {2, 5, 3, 4}, attrs({{"axis", int64_t{1}}}));
               }});
  c.push_back({"MatMulBatched", [] { return binary("MatMul", {2, 3, 4, 6}, {2, 3, 6, 5}); }});
  c.push_back({"MatMulBatchBroadcast", [] { return binary("MatMul", {2, 1, 4, 6}, {3, 6, 5}); }});
  c.push_back({"MatMulLinearWeights", [] {
                 return GraphBuilder()
                     .input("x", {2, 5, 12})
                     .constant("w", random_tensor({12, 7}, 50))
                     .node("MatMul", {"x", "w"}, {"y"})
                     .output("y")
                     .build();
               }});
  // Rows packed per task in blocks of mc: several blocks, the last ragged and not a whole tile.
  c.push_back({"MatMulLinearWeightsRowBlocks", [] {
                 return GraphBuilder()
                     .input("x", {3, 67, 40})
                     .constant("w", random_tensor({40, 23}, 51))
                     .node("MatMul", {"x", "w"}, {"y"})
                     .output("y")
                     .build();
               }});
  // nn.Linear on 3-D activations: MatMul + Add(bias) run as one GEMM with the bias per column,
  // here with the GELU after it (a transformer MLP's fc1) over ragged row blocks.
  c.push_back({"MatMulBiasGelu", [] {
                 return GraphBuilder()
                     .input("x", {3, 67, 40})
                     .constant("w", random_tensor({40, 23}, 55))
                     .constant("b", random_tensor({23}, 56))
                     .constant("sqrt2", scalar(1.4142135623730951f))
                     .constant("one", scalar(1.0f))
                     .constant("half", scalar(0.5f))
                     .node("MatMul", {"x", "w"}, {"m"})
                     .node("Add", {"b", "m"}, {"h"})
                     .node("Div", {"h", "sqrt2"}, {"d"})
                     .node("Erf", {"d"}, {"e"})
                     .node("Add", {"e", "one"}, {"a"})
                     .node("Mul", {"h", "a"}, {"p"})
                     .node("Mul", {"p", "half"}, {"y"})
                     .output("y")
                     .build();
               }});
  // fc2 of a transformer block: bias shaped [1, 1, N], then the residual Add of the block's
  // input (the residual read in the epilogue per row block), then a Relu.
  c.push_back({"MatMulBiasResidualRelu", [] {
                 return GraphBuilder()
                     .input("x", {2, 45, 24})
                     .constant("w", random_tensor({24, 24}, 57))
                     .constant("b", random_tensor({1, 1, 24}, 58))
                     .node("MatMul", {"x", "w"}, {"m"})
                     .node("Add", {"m", "b"}, {"h"})
                     .node("Add", {"x", "h"}, {"r"})
                     .node("Relu", {"r"}, {"y"})
                     .output("y")
                     .build();
               }});
  // Both operands at run time (heads packed per item), a bias per column and a residual.
  c.push_back({"MatMulBatchedBiasResidual", [] {
                 return GraphBuilder()
                     .input("x", {2, 3, 13, 9})
                     .input("z", {2, 3, 9, 11})
                     .input("s", {2, 3, 13, 11})
                     .constant("b", random_tensor({11}, 59))
                     .node("MatMul", {"x", "z"}, {"m"})
                     .node("Add", {"m", "b"}, {"h"})
                     .node("Add", {"h", "s"}, {"y"})
                     .output("y")
                     .build();
               }});
  // Adds that are not a per-column bias stay separate steps: a per-row constant, and a bias
  // whose Add broadcasts the output to a larger shape.
  c.push_back({"MatMulAddPerRowConstant", [] {
                 return GraphBuilder()
                     .input("x", {2, 6, 10})
                     .constant("w", random_tensor({10, 6}, 60))
                     .constant("b", random_tensor({6, 1}, 61))
                     .node("MatMul", {"x", "w"}, {"m"})
                     .node("Add", {"m", "b"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"MatMulAddBroadcastsOutput", [] {
                 return GraphBuilder()
                     .input("x", {1, 6, 10})
                     .constant("w", random_tensor({10, 7}, 62))
                     .constant("b", random_tensor({3, 1, 7}, 63))
                     .node("MatMul", {"x", "w"}, {"m"})
                     .node("Add", {"m", "b"}, {"y"})
                     .output("y")
                     .build();
               }});
  // QDQ quantization (ONNX Runtime's quantize_static format): per tensor to uint8 with a zero
  // point, per channel to int8, per channel back from int8; inputs read directly, so every
  // runtime must round the same float quotients the same way (exact match).
  c.push_back({"QuantizeLinearUInt8", [] {
                 return GraphBuilder()
                     .input("x", {2, 3, 5, 7})
                     .constant("s", scalar(0.0078125f))
                     .constant("z", Tensor::from_vector<uint8_t>({}, {120}))
                     .node("QuantizeLinear", {"x", "s", "z"}, {"y"})
                     .output("y")
                     .build();
               }});
  // Per tensor over more than one 16K chunk: the chunks run in parallel.
  c.push_back({"QuantizeLinearUInt8Chunks", [] {
                 return GraphBuilder()
                     .input("x", {2, 3, 50, 60})
                     .constant("s", scalar(0.0078125f))
                     .constant("z", Tensor::from_vector<uint8_t>({}, {120}))
                     .node("QuantizeLinear", {"x", "s", "z"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"QuantizeLinearInt8PerChannel", [] {
                 return GraphBuilder()
                     .input("x", {2, 3, 4, 5})
                     .constant("s", Tensor::from_vector<float>({3}, {0.01f, 0.004f, 0.03f}))
                     .constant("z", Tensor::from_vector<int8_t>({3}, {-3, 0, 17}))
                     .node("QuantizeLinear", {"x", "s", "z"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"DequantizeLinearInt8PerChannel", [] {
                 return GraphBuilder()
                     .input("q", {2, 4, 3, 3}, DType::kInt8)
                     .constant("s", Tensor::from_vector<float>({4}, {0.5f, 0.02f, 1.5f, 0.1f}))
                     .constant("z", Tensor::from_vector<int8_t>({4}, {3, -7, 0, 100}))
                     .node("DequantizeLinear", {"q", "s", "z"}, {"y"},
                           attrs({{"axis", int64_t{1}}}))
                     .output("y")
                     .build();
               }});
  // A QDQ conv block: the input's QuantizeLinear / DequantizeLinear, weights stored as int8 with
  // per-channel scales (folded at load), the conv and Relu, then the activation's pair (fused
  // into the conv's step on cpu). A conv output within rounding error of a quantization step may
  // round the other way, so the tolerance is one step (0.02) relative to values near 1.
  c.push_back(
      {"QdqConvBlock",
       [] {
         Graph g = qdq_conv_block();
         prepare_graph(g);  // as an imported model is: one int8 unit where a plugin takes it
         return g;
       },
       0.02, qdq_conv_block});
  // LRN across channels: AlexNet's (size 5, alpha 1e-4, beta 0.75, bias 2) over ragged planes, and
  // an even window (2 channels before, 1 after) with a larger alpha so the scaling matters.
  c.push_back(
      {"LrnAlexNet", [] {
         return unary(
             "LRN", {2, 7, 5, 9},
             attrs({{"size", int64_t{5}}, {"alpha", 1e-4f}, {"beta", 0.75f}, {"bias", 2.0f}}));
       }});
  c.push_back({"LrnEvenWindow", [] {
                 return unary("LRN", {1, 6, 3, 17},
                              attrs({{"size", int64_t{4}}, {"alpha", 0.5f}, {"beta", 0.6f}}));
               }});
  // GridSample (opset 16) with random grids, most points outside [-1, 1]: bilinear with zeros,
  // nearest with reflection and aligned corners, bicubic with border padding; output sizes other
  // than the input's.
  auto grid_sample = [](const char* mode, const char* padding, int64_t align) {
    return GraphBuilder(16)
        .input("x", {2, 3, 7, 9})
        .input("grid", {2, 5, 6, 2})
        .node("GridSample", {"x", "grid"}, {"y"},
              attrs({{"mode", std::string(mode)},
                     {"padding_mode", std::string(padding)},
                     {"align_corners", align}}))
        .output("y")
        .build();
  };
  c.push_back({"GridSampleBilinearZeros", [=] { return grid_sample("bilinear", "zeros", 0); }});
  c.push_back(
      {"GridSampleNearestReflection", [=] { return grid_sample("nearest", "reflection", 1); }});
  c.push_back({"GridSampleBicubicBorder", [=] { return grid_sample("bicubic", "border", 0); }});
  c.push_back(
      {"GridSampleBilinearReflection", [=] { return grid_sample("bilinear", "reflection", 0); }});
  // Attention-sized heads with odd extents: each head packs its own A and B.
  c.push_back({"MatMulBatchedHeads", [] {
                 return binary("MatMul", {2, 3, 45, 37}, {2, 3, 37, 19});
               }});
  c.push_back(
      {"ConvDilatedDepthwise", [] {
         return conv(
             {1, 6, 11, 11}, {6, 1, 3, 3},
             attrs({{"group", int64_t{6}}, {"dilations", V{2, 2}}, {"pads", V{2, 2, 2, 2}}}), true);
       }});
  // 1-D convs: ECA attention's kernel over channels (timm's eca_resnet), and one with groups,
  // stride, dilation and uneven padding.
  c.push_back({"Conv1DEcaKernel5", [] {
                 return conv({2, 1, 64}, {1, 1, 5}, attrs({{"pads", V{2, 2}}}), false);
               }});
  c.push_back({"Conv1DGroupsStride2Dilated", [] {
                 return conv({1, 8, 37}, {12, 4, 3},
                             attrs({{"group", int64_t{2}},
                                    {"strides", V{2}},
                                    {"dilations", V{2}},
                                    {"pads", V{2, 1}}}),
                             true);
               }});
  // Masks computed from the input: every comparison, And / Or / Xor / Not, Where with all three
  // operands broadcast, and the mask cast to float32 (bool outputs compare bit-exact).
  c.push_back({"MaskComparisonsLogicalWhere", [] {
                 return GraphBuilder()
                     .input("x", {2, 3, 5, 4})
                     .input("y", {1, 3, 1, 4})
                     .constant("t", scalar(0.2f))
                     .node("Less", {"x", "y"}, {"lt"})
                     .node("Greater", {"x", "t"}, {"gt"})
                     .node("LessOrEqual", {"y", "x"}, {"le"})
                     .node("GreaterOrEqual", {"x", "t"}, {"ge"})
                     .node("Equal", {"x", "x"}, {"eq"})
                     .node("Not", {"gt"}, {"ngt"})
                     .node("And", {"lt", "ngt"}, {"a"})
                     .node("Or", {"a", "le"}, {"o"})
                     .node("Xor", {"o", "ge"}, {"m"})
                     .node("And", {"m", "eq"}, {"mask"})
                     .node("Where", {"mask", "x", "y"}, {"w"})
                     .node("Cast", {"mask"}, {"f"}, attrs({{"to", int64_t{1}}}))
                     .output("w")
                     .output("f")
                     .output("mask")
                     .build();
               }});
  // A masked fill as exporters write masked_fill: Where(mask [1,1,5,1], -1e9 scalar, scores).
  c.push_back({"WhereMaskedFillBroadcast", [] {
                 return GraphBuilder()
                     .input("scores", {2, 4, 5, 6})
                     .input("keys", {1, 1, 5, 1})
                     .constant("zero", scalar(0.0f))
                     .constant("fill", scalar(-1e9f))
                     .node("Less", {"keys", "zero"}, {"mask"})
                     .node("Where", {"mask", "fill", "scores"}, {"y"})
                     .output("y")
                     .build();
               }});
  // 3-D pooling (3-D CNNs on clips): a video stem's Conv3d -> Relu -> MaxPool3d (1x3x3, stride
  // 1x2x2); an average with ceil mode and padding left out of the divisor; one counting the
  // padding, with uneven pads, at batch 2.
  c.push_back({"Conv3DReluMaxPool3D", [] {
                 return GraphBuilder()
                     .input("x", {1, 3, 4, 11, 10})
                     .constant("w", random_tensor({6, 3, 3, 3, 3}, 96))
                     .node("Conv", {"x", "w"}, {"c"}, attrs({{"pads", V{1, 1, 1, 1, 1, 1}}}))
                     .node("Relu", {"c"}, {"r"})
                     .node("MaxPool", {"r"}, {"y"},
                           attrs({{"kernel_shape", V{1, 3, 3}},
                                  {"strides", V{1, 2, 2}},
                                  {"pads", V{0, 1, 1, 0, 1, 1}}}))
                     .output("y")
                     .build();
               }});
  c.push_back({"AvgPool3DCeilExcludePad", [] {
                 return GraphBuilder()
                     .input("x", {1, 4, 6, 7, 7})
                     .node("AveragePool", {"x"}, {"y"},
                           attrs({{"kernel_shape", V{3, 3, 3}},
                                  {"strides", V{2, 2, 2}},
                                  {"pads", V{1, 1, 1, 1, 1, 1}},
                                  {"ceil_mode", int64_t{1}}}))
                     .output("y")
                     .build();
               }});
  c.push_back({"AvgPool3DIncludePadUnevenBatch2", [] {
                 return GraphBuilder()
                     .input("x", {2, 3, 5, 6, 5})
                     .node("AveragePool", {"x"}, {"y"},
                           attrs({{"kernel_shape", V{3, 2, 2}},
                                  {"strides", V{2, 2, 1}},
                                  {"pads", V{1, 0, 1, 1, 1, 0}},
                                  {"count_include_pad", int64_t{1}}}))
                     .output("y")
                     .build();
               }});
  // 1-D pooling (audio and sequence front ends): a Conv1d -> Relu -> MaxPool1d stack (the pool
  // may fuse into the conv), and average pooling with pads, ceil mode and padding left out of
  // the divisor.
  c.push_back({"Conv1DReluMaxPool1D", [] {
                 return GraphBuilder()
                     .input("x", {2, 6, 41})
                     .constant("w", random_tensor({16, 6, 5}, 91))
                     .constant("b", random_tensor({16}, 92))
                     .node("Conv", {"x", "w", "b"}, {"c"}, attrs({{"pads", V{2, 2}}}))
                     .node("Relu", {"c"}, {"r"})
                     .node("MaxPool", {"r"}, {"y"},
                           attrs({{"kernel_shape", V{3}}, {"strides", V{2}}, {"pads", V{1, 1}}}))
                     .output("y")
                     .build();
               }});
  c.push_back({"AvgPool1DCeilPads", [] {
                 return GraphBuilder()
                     .input("x", {1, 5, 20})
                     .node("AveragePool", {"x"}, {"y"},
                           attrs({{"kernel_shape", V{3}},
                                  {"strides", V{2}},
                                  {"pads", V{1, 1}},
                                  {"ceil_mode", int64_t{1}}}))
                     .output("y")
                     .build();
               }});
  // 3-D convs (torchvision's r3d / mc3 / r2plus1d video networks): a 3x3x3 block with
  // BatchNorm and Relu fused, the strided 1x1x1 shortcut with a residual Add and Relu, (2+1)-D
  // factored kernels, groups with dilations and uneven pads over a batch of 2, depth taps that
  // only read padding, and a deep layer whose GEMM runs K in chunks.
  c.push_back({"Conv3DBnRelu", [] {
                 return GraphBuilder()
                     .input("x", {1, 5, 4, 9, 8})
                     .constant("w", random_tensor({12, 5, 3, 3, 3}, 81))
                     .constant("scale", random_tensor({12}, 82))
                     .constant("shift", random_tensor({12}, 83))
                     .constant("mean", random_tensor({12}, 84))
                     .constant("var", positive_tensor({12}, 85))
                     .node("Conv", {"x", "w"}, {"c"}, attrs({{"pads", V{1, 1, 1, 1, 1, 1}}}))
                     .node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"b"})
                     .node("Relu", {"b"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"Conv3DStride2ShortcutResidualRelu", [] {
                 return GraphBuilder()
                     .input("x", {1, 8, 5, 10, 9})
                     .input("skip", {1, 16, 3, 5, 5})
                     .constant("w", random_tensor({16, 8, 1, 1, 1}, 86))
                     .constant("b", random_tensor({16}, 87))
                     .node("Conv", {"x", "w", "b"}, {"c"}, attrs({{"strides", V{2, 2, 2}}}))
                     .node("Add", {"c", "skip"}, {"s"})
                     .node("Relu", {"s"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"Conv3DFactored2Plus1D", [] {
                 return GraphBuilder()
                     .input("x", {1, 3, 6, 11, 11})
                     .constant("ws", random_tensor({10, 3, 1, 3, 3}, 88))
                     .constant("wt", random_tensor({7, 10, 3, 1, 1}, 89))
                     .node("Conv", {"x", "ws"}, {"s"},
                           attrs({{"strides", V{1, 2, 2}}, {"pads", V{0, 1, 1, 0, 1, 1}}}))
                     .node("Relu", {"s"}, {"r"})
                     .node("Conv", {"r", "wt"}, {"y"},
                           attrs({{"strides", V{2, 1, 1}}, {"pads", V{1, 0, 0, 1, 0, 0}}}))
                     .output("y")
                     .build();
               }});
  c.push_back({"Conv3DGroupsDilatedUnevenBatch2", [] {
                 return conv({2, 6, 7, 8, 9}, {9, 2, 2, 3, 2},
                             attrs({{"group", int64_t{3}},
                                    {"dilations", V{2, 1, 3}},
                                    {"strides", V{1, 2, 1}},
                                    {"pads", V{1, 0, 2, 2, 1, 0}}}),
                             true);
               }});
  c.push_back({"Conv3DDepthTapsInPadding", [] {
                 return conv({1, 4, 1, 6, 6}, {5, 4, 5, 3, 3},
                             attrs({{"pads", V{2, 1, 1, 2, 1, 1}}}), true);
               }});
  // 1296-term sums in another order than the reference loops': float32 rounding of ~2e-5.
  c.push_back({"Conv3DDeepChunkedK",
               [] {
                 return conv({1, 48, 3, 4, 4}, {64, 48, 3, 3, 3},
                             attrs({{"pads", V{1, 1, 1, 1, 1, 1}}}), true);
               },
               1e-4});
  // Dilated 3x3 convs of a dilated ResNet (FCN, DeepLab's backbone): rate 2 with a residual Add
  // and Relu fused, and rates 3 x 2 with uneven pads.
  c.push_back({"ConvDilatedResidualRelu", [] {
                 return GraphBuilder()
                     .input("x", {1, 32, 15, 13})
                     .input("skip", {1, 24, 15, 13})
                     .constant("w", random_tensor({24, 32, 3, 3}, 71))
                     .constant("b", random_tensor({24}, 72))
                     .node("Conv", {"x", "w", "b"}, {"c"},
                           attrs({{"dilations", V{2, 2}}, {"pads", V{2, 2, 2, 2}}}))
                     .node("Add", {"c", "skip"}, {"s"})
                     .node("Relu", {"s"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"ConvDilatedUnevenRates", [] {
                 return conv({2, 16, 19, 17}, {20, 16, 3, 3},
                             attrs({{"dilations", V{3, 2}}, {"pads", V{3, 1, 2, 3}}}), true);
               }});
  // regnet's group width 8 at stride 2, then a Relu (phase planes group by group).
  c.push_back(
      {"ConvGroupWidth8Stride2Relu", [] {
         return GraphBuilder()
             .input("x", {2, 32, 15, 15})
             .constant("w", random_tensor({32, 8, 3, 3}, 55))
             .constant("b", random_tensor({32}, 56))
             .node("Conv", {"x", "w", "b"}, {"c"},
                   attrs({{"group", int64_t{4}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}}))
             .node("Relu", {"c"}, {"y"})
             .output("y")
             .build();
       }});
  // ASPP at a rate past the map: only the centre tap reads the input (a 1x1 conv), and a rate
  // where the outer taps read it for some rows.
  c.push_back({"ConvDilatedDeadTaps", [] {
                 return conv({1, 6, 5, 5}, {4, 6, 3, 3},
                             attrs({{"dilations", V{6, 6}}, {"pads", V{6, 6, 6, 6}}}), true);
               }});
  c.push_back({"ConvDilatedPartlyLiveTaps", [] {
                 return conv({1, 3, 7, 6}, {4, 3, 3, 3},
                             attrs({{"dilations", V{5, 4}}, {"pads", V{5, 4, 5, 4}}}), true);
               }});
  // deeplabv3's ASPP at rate 12 on a map a little larger than the rate: the outputs split into 9
  // rectangles with 1, 2 or 4 live taps (tap-region GEMMs), then BatchNorm and Relu fused.
  c.push_back({"ConvAsppRate12BnRelu", [] {
                 return GraphBuilder()
                     .input("x", {2, 24, 15, 14})
                     .constant("w", random_tensor({20, 24, 3, 3}, 57))
                     .constant("scale", random_tensor({20}, 58))
                     .constant("shift", random_tensor({20}, 59))
                     .constant("mean", random_tensor({20}, 60))
                     .constant("var", positive_tensor({20}, 61))
                     .node("Conv", {"x", "w"}, {"c"},
                           attrs({{"dilations", V{12, 12}}, {"pads", V{12, 12, 12, 12}}}))
                     .node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"b"})
                     .node("Relu", {"b"}, {"y"})
                     .output("y")
                     .build();
               }});
  // Enough input channels (K = 1152 for the full window) that the GEMM blocking runs K in chunks:
  // each tap's product must be added to y once, after its last chunk.
  c.push_back({"ConvAsppRate12ManyChannels", [] {
                 return conv({1, 128, 14, 14}, {8, 128, 3, 3},
                             attrs({{"dilations", V{12, 12}}, {"pads", V{12, 12, 12, 12}}}), true);
               }});
  // Stride 2 with unequal rates and pads, a residual Add after it: rectangles whose B rows are
  // strided copies, and the Add and clamp in the pass after the GEMMs.
  c.push_back(
      {"ConvDilatedStride2Residual", [] {
         return GraphBuilder()
             .input("x", {1, 5, 17, 13})
             .input("r", {1, 7, 9, 7})
             .constant("w", random_tensor({7, 5, 3, 5}, 62))
             .constant("b", random_tensor({7}, 63))
             .node("Conv", {"x", "w", "b"}, {"c"},
                   attrs({{"dilations", V{7, 3}}, {"strides", V{2, 2}}, {"pads", V{7, 6, 7, 6}}}))
             .node("Add", {"c", "r"}, {"a"})
             .node("Relu", {"a"}, {"y"})
             .output("y")
             .build();
       }});
  // A pointwise op after a view (a float32 Cast aliases its input) must not run in place: the
  // Add still reads the Cast's input.
  c.push_back({"SigmoidAfterCastView", [] {
                 return GraphBuilder()
                     .input("x", {2, 3, 4})
                     .node("Relu", {"x"}, {"a"})
                     .node("Cast", {"a"}, {"b"}, attrs({{"to", int64_t{1}}}))
                     .node("Sigmoid", {"b"}, {"c"})
                     .node("Add", {"a", "c"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"ConvGrouped3x3", [] {
                 return conv({1, 8, 7, 7}, {12, 2, 3, 3},
                             attrs({{"group", int64_t{4}}, {"pads", V{1, 1, 1, 1}}}), true);
               }});
  // regnet's later stages: many groups of width 8 on a small map, one group per task.
  c.push_back({"ConvManyGroupsOfEight", [] {
                 return conv({1, 96, 7, 9}, {96, 8, 3, 3},
                             attrs({{"group", int64_t{12}}, {"pads", V{1, 1, 1, 1}}}), true);
               }});
  // Grouped 3x3 convs of a few channels per group (the cpu plugin's direct grouped kernel):
  // regnet's group width 8 at stride 1 on 7x7 and 13x13 maps, without bias; at stride 2 on an
  // even map with BatchNorm and Relu; with a residual Add and Relu; 1-tall and 1x1 outputs; widths
  // 6 and 12; 8 in and 16 out per group; asymmetric pads; a SiLU after it; a batch of 2 on a map
  // split into row blocks.
  c.push_back({"GconvWidth8Stride1NoBias7x7", [] {
                 return conv({1, 48, 7, 7}, {48, 8, 3, 3},
                             attrs({{"group", int64_t{6}}, {"pads", V{1, 1, 1, 1}}}), false);
               }});
  c.push_back({"GconvWidth8Stride1Bias13x13", [] {
                 return conv({1, 32, 13, 13}, {32, 8, 3, 3},
                             attrs({{"group", int64_t{4}}, {"pads", V{1, 1, 1, 1}}}), true);
               }});
  c.push_back(
      {"GconvWidth8Stride2BnRelu", [] {
         return GraphBuilder()
             .input("x", {1, 48, 14, 14})
             .constant("w", random_tensor({48, 8, 3, 3}, 71))
             .constant("scale", random_tensor({48}, 72))
             .constant("shift", random_tensor({48}, 73))
             .constant("mean", random_tensor({48}, 74))
             .constant("var", positive_tensor({48}, 75))
             .node("Conv", {"x", "w"}, {"c"},
                   attrs({{"group", int64_t{6}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}}))
             .node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"b"})
             .node("Relu", {"b"}, {"y"})
             .output("y")
             .build();
       }});
  c.push_back({"GconvWidth8ResidualRelu", [] {
                 return GraphBuilder()
                     .input("x", {1, 40, 7, 7})
                     .input("r", {1, 40, 7, 7})
                     .constant("w", random_tensor({40, 8, 3, 3}, 76))
                     .constant("b", random_tensor({40}, 77))
                     .node("Conv", {"x", "w", "b"}, {"c"},
                           attrs({{"group", int64_t{5}}, {"pads", V{1, 1, 1, 1}}}))
                     .node("Add", {"c", "r"}, {"a"})
                     .node("Relu", {"a"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"GconvWidth8OneRowOutput", [] {
                 return conv({1, 16, 1, 9}, {16, 8, 3, 3},
                             attrs({{"group", int64_t{2}}, {"pads", V{1, 1, 1, 1}}}), true);
               }});
  c.push_back({"GconvWidth8Stride2OnePixelOutput", [] {
                 return conv(
                     {1, 16, 2, 2}, {16, 8, 3, 3},
                     attrs({{"group", int64_t{2}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}}),
                     true);
               }});
  c.push_back({"GconvWidth6Stride1", [] {
                 return conv({1, 36, 13, 13}, {36, 6, 3, 3},
                             attrs({{"group", int64_t{6}}, {"pads", V{1, 1, 1, 1}}}), true);
               }});
  c.push_back({"GconvWidth12Stride2OddMap", [] {
                 return conv(
                     {1, 24, 13, 13}, {24, 12, 3, 3},
                     attrs({{"group", int64_t{2}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}}),
                     true);
               }});
  c.push_back({"GconvEightInSixteenOut", [] {
                 return conv({1, 16, 11, 11}, {32, 8, 3, 3},
                             attrs({{"group", int64_t{2}}, {"pads", V{1, 1, 1, 1}}}), true);
               }});
  c.push_back({"GconvStride2AsymmetricPads", [] {
                 return conv(
                     {1, 16, 8, 8}, {16, 8, 3, 3},
                     attrs({{"group", int64_t{2}}, {"strides", V{2, 2}}, {"pads", V{0, 0, 1, 1}}}),
                     true);
               }});
  c.push_back({"GconvSiLU", [] {
                 return GraphBuilder()
                     .input("x", {1, 24, 10, 10})
                     .constant("w", random_tensor({24, 8, 3, 3}, 78))
                     .node("Conv", {"x", "w"}, {"c"},
                           attrs({{"group", int64_t{3}}, {"pads", V{1, 1, 1, 1}}}))
                     .node("Sigmoid", {"c"}, {"s"})
                     .node("Mul", {"c", "s"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"GconvWidth8Batch2RowBlocks", [] {
                 return conv({2, 16, 40, 36}, {16, 8, 3, 3},
                             attrs({{"group", int64_t{2}}, {"pads", V{1, 1, 1, 1}}}), true);
               }});
  // Dilated "same" depthwise convs (lraspp's 5x5 dilation 2) run as d x d undilated phases; odd
  // sizes give phases of unequal size.
  c.push_back(
      {"DepthwiseDilated5x5Same", [] {
         return conv(
             {1, 6, 14, 15}, {6, 1, 5, 5},
             attrs({{"group", int64_t{6}}, {"dilations", V{2, 2}}, {"pads", V{4, 4, 4, 4}}}), true);
       }});
  c.push_back(
      {"DepthwiseDilated3x3Rate3", [] {
         return conv(
             {1, 4, 13, 17}, {4, 1, 3, 3},
             attrs({{"group", int64_t{4}}, {"dilations", V{3, 3}}, {"pads", V{3, 3, 3, 3}}}), true);
       }});
}

Graph conv_transpose(Shape x, Shape w, Attributes a, bool bias) {
  GraphBuilder b;
  b.input("x", x).constant("w", random_tensor(w, 61));
  if (bias) b.constant("bias", random_tensor({w[1] * a.get_int("group", 1)}, 62));
  return b.node("ConvTranspose", {"x", "w", bias ? "bias" : ""}, {"y"}, a).output("y").build();
}

Graph normalization(const std::string& op, Shape x, int64_t params, Attributes a, int64_t opset) {
  return GraphBuilder(opset)
      .input("x", x)
      .constant("scale", random_tensor({params}, 63))
      .constant("bias", random_tensor({params}, 64))
      .node(op, {"x", "scale", "bias"}, {"y"}, a)
      .output("y")
      .build();
}

// Opset 14: Add/Sub/Mul/Div take int8/uint8 from there (ONNX Runtime refuses them below).
Graph int8_binary(const std::string& op, DType dtype, Shape a, Shape b) {
  return GraphBuilder(14)
      .input("a", a, dtype)
      .input("b", b, dtype)
      .node(op, {"a", "b"}, {"y"})
      .output("y")
      .build();
}

// The core ops the cpu plugin runs beyond the zoo's: transposed convs (decoders, segmentation
// heads), block rearrangements, Tile, instance and group norms, index ops; and the int8/uint8
// arithmetic and max pooling ONNX defines (wrap-around, truncating division).
void add_op_set_cases(std::vector<DifferentialCase>* out) {
  using V = std::vector<int64_t>;
  std::vector<DifferentialCase>& c = *out;
  c.push_back(
      {"ConvTransposeStride2OutputPadding", [] {
         return conv_transpose(
             {1, 4, 5, 6}, {4, 3, 3, 3},
             attrs({{"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}, {"output_padding", V{1, 1}}}),
             true);
       }});
  c.push_back(
      {"ConvTransposeUpsample2x2", [] {
         return conv_transpose({1, 8, 6, 7}, {8, 4, 2, 2}, attrs({{"strides", V{2, 2}}}), true);
       }});
  c.push_back({"ConvTransposeGroupsDilated", [] {
                 return conv_transpose({2, 6, 4, 5}, {6, 2, 3, 2},
                                       attrs({{"group", int64_t{3}},
                                              {"dilations", V{2, 1}},
                                              {"strides", V{1, 3}},
                                              {"pads", V{0, 1, 2, 0}}}),
                                       true);
               }});
  c.push_back({"ConvTransposeOutputShape", [] {
                 return conv_transpose({1, 2, 3, 3}, {2, 3, 3, 3},
                                       attrs({{"strides", V{3, 2}}, {"output_shape", V{10, 8}}}),
                                       false);
               }});
  c.push_back({"ConvTransposeSameUpper", [] {
                 return conv_transpose(
                     {1, 3, 5, 4}, {3, 2, 3, 3},
                     attrs({{"strides", V{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}), true);
               }});
  // Weights as a graph input (the ONNX node tests give them so): packed at run time.
  c.push_back({"ConvTransposeRuntimeWeights", [] {
                 return GraphBuilder()
                     .input("x", {1, 4, 3, 5})
                     .input("w", {4, 2, 3, 3})
                     .node("ConvTranspose", {"x", "w"}, {"y"},
                           attrs({{"group", int64_t{2}}, {"strides", V{2, 1}}}))
                     .output("y")
                     .build();
               }});
  c.push_back({"ConvTranspose1D", [] {
                 return conv_transpose({2, 3, 7}, {3, 4, 3},
                                       attrs({{"strides", V{2}}, {"pads", V{1, 0}}}), true);
               }});
  for (const char* mode : {"DCR", "CRD"}) {
    c.push_back({std::string("DepthToSpace") + mode, [mode] {
                   return unary("DepthToSpace", {2, 8, 3, 5},
                                attrs({{"blocksize", int64_t{2}}, {"mode", std::string(mode)}}));
                 }});
  }
  c.push_back({"DepthToSpaceBlock3", [] {
                 return unary("DepthToSpace", {1, 18, 2, 3}, attrs({{"blocksize", int64_t{3}}}));
               }});
  c.push_back({"SpaceToDepth", [] {
                 return unary("SpaceToDepth", {2, 3, 6, 4}, attrs({{"blocksize", int64_t{2}}}));
               }});
  c.push_back({"TileEveryAxis", [] {
                 return GraphBuilder()
                     .input("x", {2, 1, 3})
                     .constant("r", ints({2, 3, 2}))
                     .node("Tile", {"x", "r"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"TileRows", [] {
                 return GraphBuilder()
                     .input("x", {3, 5})
                     .constant("r", ints({4, 1}))
                     .node("Tile", {"x", "r"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"InstanceNorm", [] {
                 return normalization("InstanceNormalization", {2, 3, 5, 7}, 3,
                                      attrs({{"epsilon", 1e-3f}}), 13);
               }});
  c.push_back({"InstanceNorm1D", [] {
                 return normalization("InstanceNormalization", {2, 4, 33}, 4, {}, 13);
               }});
  // Opset 18: one scale per group; opset 21: one per channel, on a 5-D input.
  c.push_back({"GroupNormPerGroupScale", [] {
                 return normalization("GroupNormalization", {2, 6, 4, 5}, 3,
                                      attrs({{"num_groups", int64_t{3}}}), 18);
               }});
  c.push_back({"GroupNormPerChannelScale", [] {
                 return normalization("GroupNormalization", {1, 8, 3, 3, 2}, 8,
                                      attrs({{"num_groups", int64_t{4}}, {"epsilon", 1e-4f}}), 21);
               }});
  c.push_back({"GlobalMaxPool", [] { return unary("GlobalMaxPool", {2, 5, 4, 3}); }});
  c.push_back({"ArgMaxMiddleAxis", [] {
                 return unary("ArgMax", {3, 7, 5}, attrs({{"axis", int64_t{1}}}));
               }});
  c.push_back({"ArgMinMiddleAxisLastIndex", [] {
                 return unary("ArgMin", {3, 7, 5},
                              attrs({{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}}));
               }});
  c.push_back({"ArgMinLastAxis", [] {
                 return unary("ArgMin", {4, 9}, attrs({{"axis", int64_t{-1}}}));
               }});
  c.push_back({"ArgMaxLastAxisNoKeepdims", [] {
                 return unary("ArgMax", {4, 9},
                              attrs({{"axis", int64_t{-1}},
                                     {"keepdims", int64_t{0}},
                                     {"select_last_index", int64_t{1}}}));
               }});
  // Values that are not float32 on a device: an attention mask as transformers exports it
  // (int64 [batch, seq] -> [batch, 1, 1, seq] -> float -> (1 - m) * -10000 added to the scores).
  c.push_back({"AttentionMaskInt64", [] {
                 return GraphBuilder()
                     .input("scores", {2, 3, 6, 6})
                     .input("mask", {2, 6}, DType::kInt64)
                     .constant("axes", ints({1, 2}))
                     .constant("one", scalar(1.0f))
                     .constant("big", scalar(-10000.0f))
                     .node("Unsqueeze", {"mask", "axes"}, {"m4"})
                     .node("Cast", {"m4"}, {"mf"}, attrs({{"to", int64_t{1}}}))
                     .node("Sub", {"one", "mf"}, {"inv"})
                     .node("Mul", {"inv", "big"}, {"bias"})
                     .node("Add", {"scores", "bias"}, {"s"})
                     .node("Softmax", {"s"}, {"y"}, attrs({{"axis", int64_t{-1}}}))
                     .output("y")
                     .build();
               }});
  // int64 and int32 arithmetic with broadcasting (index math, shape arithmetic on data),
  // integer comparisons, Where on integers, copies of int64 (Transpose, Slice, Expand), and
  // casts between integer types and to bool.
  c.push_back({"IntegerArithmeticCompareWhere", [] {
                 return GraphBuilder()
                     .input("a", {3, 1, 5}, DType::kInt64)
                     .input("b", {4, 1}, DType::kInt64)
                     .input("i", {3, 4, 5}, DType::kInt32)
                     .constant("three", Tensor::from_vector<int64_t>({}, {3}))
                     .constant("perm_starts", ints({1}))
                     .constant("perm_ends", ints({4}))
                     .constant("slice_axes", ints({2}))
                     .constant("shape", ints({2, 3, 4, 5}))
                     .node("Add", {"a", "b"}, {"s"})
                     .node("Mul", {"s", "b"}, {"p"})
                     .node("Sub", {"p", "a"}, {"d"})
                     .node("Div", {"d", "three"}, {"q"})
                     .node("Max", {"q", "a"}, {"mx"})
                     .node("Min", {"mx", "b"}, {"mn"})
                     .node("Greater", {"mn", "three"}, {"gt"})
                     .node("Where", {"gt", "mn", "q"}, {"w"})
                     .node("Transpose", {"w"}, {"t"},
                           attrs({{"perm", std::vector<int64_t>{2, 0, 1}}}))
                     .node("Slice", {"t", "perm_starts", "perm_ends", "slice_axes"}, {"sl"})
                     .node("Expand", {"w", "shape"}, {"e"})
                     .node("Cast", {"i"}, {"i64"}, attrs({{"to", int64_t{7}}}))
                     .node("Equal", {"i64", "w"}, {"eq"})
                     .node("Cast", {"w"}, {"w32"}, attrs({{"to", int64_t{6}}}))
                     .node("Sub", {"i", "w32"}, {"di"})
                     .node("LessOrEqual", {"di", "i"}, {"le"})
                     .node("Cast", {"q"}, {"qb"}, attrs({{"to", int64_t{9}}}))
                     .output("sl")
                     .output("e")
                     .output("eq")
                     .output("di")
                     .output("le")
                     .output("qb")
                     .build();
               }});
  // Casts from float: toward zero (values out of the target's range are undefined in ONNX and
  // differ between ONNX Runtime builds, so none are here), to bool, and back.
  c.push_back({"CastFloatToIntegersAndBool", [] {
                 return GraphBuilder()
                     .input("x", {4, 7})
                     .constant("scale", scalar(1000.0f))
                     .node("Mul", {"x", "scale"}, {"big"})
                     .node("Cast", {"x"}, {"i64"}, attrs({{"to", int64_t{7}}}))
                     .node("Cast", {"big"}, {"i32"}, attrs({{"to", int64_t{6}}}))
                     .node("Cast", {"x"}, {"b"}, attrs({{"to", int64_t{9}}}))
                     .node("Not", {"b"}, {"nb"})
                     .node("Cast", {"nb"}, {"f"}, attrs({{"to", int64_t{1}}}))
                     .node("Cast", {"i64"}, {"back"}, attrs({{"to", int64_t{1}}}))
                     .output("i64")
                     .output("i32")
                     .output("f")
                     .output("back")
                     .build();
               }});
  // A CTC greedy decode as OCR recognizers end: ArgMax over classes, the blank compared away.
  c.push_back({"CtcGreedyArgMaxInt", [] {
                 return GraphBuilder()
                     .input("logits", {2, 9, 6})
                     .input("ids", {2, 9}, DType::kInt32)
                     .constant("blank", Tensor::from_vector<int64_t>({}, {0}))
                     .node("ArgMax", {"logits"}, {"best"},
                           attrs({{"axis", int64_t{2}}, {"keepdims", int64_t{0}}}))
                     .node("Equal", {"best", "blank"}, {"is_blank"})
                     .node("Not", {"is_blank"}, {"keep"})
                     .node("ArgMin", {"ids"}, {"low"},
                           attrs({{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}}))
                     .output("best")
                     .output("keep")
                     .output("low")
                     .build();
               }});
  // LogSoftmax over the last axis (a CTC head) and a middle one, with a large offset whose
  // log-sum-exp must not round the result away.
  c.push_back({"LogSoftmaxLastAndMiddleAxis", [] {
                 return GraphBuilder()
                     .input("x", {2, 5, 7})
                     .constant("offset", scalar(5000.0f))
                     .node("Add", {"x", "offset"}, {"big"})
                     .node("LogSoftmax", {"big"}, {"last"}, attrs({{"axis", int64_t{-1}}}))
                     .node("LogSoftmax", {"x"}, {"middle"}, attrs({{"axis", int64_t{1}}}))
                     .output("last")
                     .output("middle")
                     .build();
               }});
  // Sum, Mean, Max and Min of three broadcasting inputs, and of one.
  c.push_back({"VariadicSumMeanMaxMin", [] {
                 return GraphBuilder()
                     .input("a", {2, 3, 4})
                     .input("b", {3, 1})
                     .input("c", {4})
                     .node("Sum", {"a", "b", "c"}, {"s"})
                     .node("Mean", {"a", "b", "c"}, {"m"})
                     .node("Max", {"c", "a", "b"}, {"mx"})
                     .node("Min", {"a", "b", "c"}, {"mn"})
                     .node("Sum", {"b"}, {"s1"})
                     .node("Mean", {"a", "a"}, {"m2"})
                     .output("s")
                     .output("m")
                     .output("mx")
                     .output("mn")
                     .output("s1")
                     .output("m2")
                     .build();
               }});
  // Gathers whose indices are computed at run time: an embedding lookup with token ids as an
  // input (negative ids count from the end), rows picked by an ArgMax, and an int64 table.
  c.push_back({"GatherRuntimeIndices", [] {
                 return GraphBuilder()
                     .input("ids", {2, 7}, DType::kInt64)
                     .input("scores", {3, 6})
                     .input("codes", {12, 3}, DType::kInt64)
                     .constant("table", random_tensor({20, 8}, 97))
                     .node("Gather", {"table", "ids"}, {"emb"})
                     .node("ArgMax", {"scores"}, {"best"},
                           attrs({{"axis", int64_t{1}}, {"keepdims", int64_t{0}}}))
                     .node("Gather", {"scores", "best"}, {"cols"}, attrs({{"axis", int64_t{1}}}))
                     .node("Gather", {"codes", "ids"}, {"picked"})
                     .output("emb")
                     .output("cols")
                     .output("picked")
                     .build();
               }});
  // IsNaN and IsInf of values that hold both (log of negatives, division by zero), and Trilu
  // of float, int64 and bool tensors with k shifting the diagonal either way (Trilu: opset 14).
  c.push_back({"IsNaNIsInfTrilu", [] {
                 return GraphBuilder(14)
                     .input("x", {2, 4, 5})
                     .input("ids", {3, 6}, DType::kInt64)
                     .constant("zero", scalar(0.0f))
                     .constant("one", Tensor::from_vector<int64_t>({}, {1}))
                     .constant("minus_two", Tensor::from_vector<int64_t>({}, {-2}))
                     .node("Log", {"x"}, {"log"})
                     .node("Div", {"x", "zero"}, {"inf"})
                     .node("IsNaN", {"log"}, {"nan_mask"})
                     .node("IsInf", {"inf"}, {"pos_inf"}, attrs({{"detect_negative", int64_t{0}}}))
                     .node("Trilu", {"x", "one"}, {"upper"})
                     .node("Trilu", {"ids", "minus_two"}, {"lower"}, attrs({{"upper", int64_t{0}}}))
                     .node("Trilu", {"nan_mask"}, {"mask_upper"})
                     .output("nan_mask")
                     .output("pos_inf")
                     .output("upper")
                     .output("lower")
                     .output("mask_upper")
                     .build();
               }});
  // TopK where the order is decided by its rules: many equal values (index order), NaNs (above
  // every number: first when largest, last when smallest).
  c.push_back({"TopKTiesNaN", [] {
                 return GraphBuilder()
                     .input("x", {3, 17})
                     .constant("two", scalar(2.0f))
                     .constant("k5", ints({5}))
                     .constant("k4", ints({4}))
                     .node("Mul", {"x", "two"}, {"x2"})
                     .node("Floor", {"x2"}, {"ties"})
                     .node("Log", {"x"}, {"nans"})
                     .node("TopK", {"ties", "k5"}, {"tv", "ti"})
                     .node("TopK", {"nans", "k5"}, {"nv", "ni"})
                     .node("TopK", {"nans", "k4"}, {"sv", "si"}, attrs({{"largest", int64_t{0}}}))
                     .output("tv")
                     .output("ti")
                     .output("nv")
                     .output("ni")
                     .output("sv")
                     .output("si")
                     .build();
               }});
  // Position ids as transformers exports them (CumSum of an int64 mask, times the mask), a
  // reverse exclusive float CumSum, and GatherElements picking with TopK's indices and with
  // run-time int64 ids (negative ones count from the end).
  c.push_back({"CumSumGatherElements", [] {
                 return GraphBuilder()
                     .input("x", {3, 10, 5})  // 10 rows: the random ids lie in [-9, 9]
                     .input("mask", {2, 9}, DType::kInt64)
                     .input("ids", {3, 2, 5}, DType::kInt64)
                     .constant("axis1", Tensor::from_vector<int64_t>({}, {1}))
                     .constant("k3", ints({3}))
                     .node("CumSum", {"mask", "axis1"}, {"cum"})
                     .node("Mul", {"cum", "mask"}, {"pos"})
                     .node("CumSum", {"x", "axis1"}, {"rev"},
                           attrs({{"exclusive", int64_t{1}}, {"reverse", int64_t{1}}}))
                     .node("TopK", {"x", "k3"}, {"tv", "ti"}, attrs({{"axis", int64_t{1}}}))
                     .node("GatherElements", {"x", "ti"}, {"picked"}, attrs({{"axis", int64_t{1}}}))
                     .node("GatherElements", {"x", "ids"}, {"by_id"}, attrs({{"axis", int64_t{1}}}))
                     .output("pos")
                     .output("rev")
                     .output("picked")
                     .output("by_id")
                     .build();
               }});
  // ScatterND as an exported in-place slice assignment writes it: whole planes of a 4-D map
  // replaced, a negative index among them.
  c.push_back({"ScatterNDPlanes", [] {
                 return GraphBuilder()
                     .input("x", {2, 3, 4, 6})
                     .input("rows", {2, 4, 6})
                     .constant("at", Tensor::from_vector<int64_t>({2, 2}, {0, 1, 1, -1}))
                     .node("ScatterND", {"x", "at", "rows"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"TopKLargestLastAxis", [] {
                 return GraphBuilder()
                     .input("x", {3, 11})
                     .constant("k", ints({4}))
                     .node("TopK", {"x", "k"}, {"v", "i"})
                     .output("v")
                     .output("i")
                     .build();
               }});
  c.push_back({"TopKSmallestMiddleAxis", [] {
                 return GraphBuilder(13)
                     .input("x", {2, 6, 5})
                     .constant("k", ints({3}))
                     .node("TopK", {"x", "k"}, {"v", "i"},
                           attrs({{"axis", int64_t{1}}, {"largest", int64_t{0}}}))
                     .output("v")
                     .output("i")
                     .build();
               }});
  c.push_back({"AddUInt8Broadcast", [] {
                 return int8_binary("Add", DType::kUInt8, {2, 3, 17}, {3, 1});
               }});
  c.push_back({"SubInt8", [] { return int8_binary("Sub", DType::kInt8, {5, 33}, {5, 33}); }});
  c.push_back({"MulUInt8Scalar", [] { return int8_binary("Mul", DType::kUInt8, {4, 9}, {}); }});
  c.push_back({"MaxInt8Broadcast", [] {
                 return int8_binary("Max", DType::kInt8, {3, 1, 6}, {1, 4, 1});
               }});
  // A constant divisor without zeros (a zero is an error): -1 and -128 / -1 wrap-around.
  c.push_back({"DivInt8", [] {
                 return GraphBuilder(14)
                     .input("a", {2, 4, 5}, DType::kInt8)
                     .constant("b", Tensor::from_vector<int8_t>({4, 1}, {3, -1, -7, 127}))
                     .node("Div", {"a", "b"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"DivUInt8", [] {
                 return GraphBuilder(14)
                     .input("a", {3, 21}, DType::kUInt8)
                     .constant("b", Tensor::from_vector<uint8_t>({}, {7}))
                     .node("Div", {"a", "b"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back(
      {"MaxPoolUInt8", [] {
         return GraphBuilder()
             .input("x", {1, 3, 9, 9}, DType::kUInt8)
             .node(
                 "MaxPool", {"x"}, {"y"},
                 attrs({{"kernel_shape", V{3, 3}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}}))
             .output("y")
             .build();
       }});
  c.push_back({"MaxPoolInt8CeilDilated", [] {
                 return GraphBuilder()
                     .input("x", {2, 2, 8, 7}, DType::kInt8)
                     .node("MaxPool", {"x"}, {"y"},
                           attrs({{"kernel_shape", V{2, 3}},
                                  {"strides", V{2, 2}},
                                  {"dilations", V{2, 1}},
                                  {"ceil_mode", int64_t{1}}}))
                     .output("y")
                     .build();
               }});
}

// 2-D pools in the shapes of exported torchvision networks (densenet's 2x2 stride-2 average pools,
// googlenet's 3x3 stride-1 pad-1 and ceil_mode pools, squeezenet's 3x3 stride-2 ceil_mode ones)
// and around them: ceil_mode windows clipped at odd sizes, count_include_pad on and off, rows of
// 7..28, stride 3, a non-square window, batch 2, and plane counts that leave a partial block of
// planes per task.
void add_pool_cases(std::vector<DifferentialCase>* out) {
  using V = std::vector<int64_t>;
  auto pool = [](const std::string& op, Shape shape, V k, V s, V p, int64_t ceil,
                 int64_t include_pad) {
    Attributes a = attrs({{"kernel_shape", k}, {"strides", s}, {"pads", p}, {"ceil_mode", ceil}});
    if (op == "AveragePool") a.set("count_include_pad", include_pad);
    return unary(op, std::move(shape), a);
  };
  std::vector<DifferentialCase>& c = *out;
  c.push_back({"AveragePool2x2S2Batch2", [=] {
                 return pool("AveragePool", {2, 37, 14, 14}, {2, 2}, {2, 2}, {0, 0, 0, 0}, 0, 0);
               }});
  c.push_back({"AveragePool2x2S2Wide", [=] {
                 return pool("AveragePool", {1, 5, 28, 56}, {2, 2}, {2, 2}, {0, 0, 0, 0}, 0, 0);
               }});
  c.push_back({"AveragePool2x2S2CeilOdd", [=] {
                 return pool("AveragePool", {2, 3, 13, 15}, {2, 2}, {2, 2}, {0, 0, 0, 0}, 1, 0);
               }});
  c.push_back({"AveragePool3x3S2CeilIncludePad", [=] {
                 return pool("AveragePool", {2, 3, 17, 19}, {3, 3}, {2, 2}, {1, 1, 1, 1}, 1, 1);
               }});
  c.push_back({"AveragePool3x3S2CeilExcludePad", [=] {
                 return pool("AveragePool", {2, 3, 17, 19}, {3, 3}, {2, 2}, {1, 1, 1, 1}, 1, 0);
               }});
  c.push_back({"AveragePool3x3S1P1IncludePad", [=] {
                 return pool("AveragePool", {2, 21, 14, 14}, {3, 3}, {1, 1}, {1, 1, 1, 1}, 0, 1);
               }});
  c.push_back({"AveragePool3x3S1P1ExcludePad", [=] {
                 return pool("AveragePool", {1, 3, 7, 9}, {3, 3}, {1, 1}, {1, 1, 1, 1}, 1, 0);
               }});
  c.push_back({"AveragePool5x5S3Pad2", [=] {
                 return pool("AveragePool", {1, 2, 16, 17}, {5, 5}, {3, 3}, {2, 2, 2, 2}, 0, 1);
               }});
  c.push_back({"AveragePool3x2S1x2", [=] {
                 return pool("AveragePool", {1, 3, 10, 11}, {3, 2}, {1, 2}, {1, 0, 1, 1}, 1, 0);
               }});
  c.push_back({"MaxPool3x3S1P1Ceil", [=] {
                 return pool("MaxPool", {2, 45, 14, 14}, {3, 3}, {1, 1}, {1, 1, 1, 1}, 1, 0);
               }});
  c.push_back({"MaxPool3x3S1P1Small", [=] {
                 return pool("MaxPool", {1, 9, 7, 7}, {3, 3}, {1, 1}, {1, 1, 1, 1}, 1, 0);
               }});
  c.push_back({"MaxPool3x3S2Ceil", [=] {
                 return pool("MaxPool", {2, 5, 27, 27}, {3, 3}, {2, 2}, {0, 0, 0, 0}, 1, 0);
               }});
  c.push_back({"MaxPool3x3S2CeilEven", [=] {
                 return pool("MaxPool", {1, 3, 28, 28}, {3, 3}, {2, 2}, {0, 0, 0, 0}, 1, 0);
               }});
  c.push_back({"MaxPool2x2S2CeilOdd", [=] {
                 return pool("MaxPool", {2, 9, 13, 13}, {2, 2}, {2, 2}, {0, 0, 0, 0}, 1, 0);
               }});
  c.push_back({"MaxPool3x3S3Pad1", [=] {
                 return pool("MaxPool", {1, 2, 11, 11}, {3, 3}, {3, 3}, {1, 1, 1, 1}, 0, 0);
               }});
}

std::vector<DifferentialCase> make_cases() {
  using V = std::vector<int64_t>;
  std::vector<DifferentialCase> c;
  c.push_back({"ConvBasic", [] { return conv({1, 3, 8, 8}, {4, 3, 3, 3}, {}, true); }});
  c.push_back({"ConvPadStride", [] {
                 return conv({1, 4, 9, 9}, {6, 4, 3, 3},
                             attrs({{"pads", V{1, 1, 1, 1}}, {"strides", V{2, 2}}}), true);
               }});
  c.push_back({"ConvDilated", [] {
                 return conv({1, 2, 10, 10}, {3, 2, 3, 3},
                             attrs({{"dilations", V{2, 2}}, {"pads", V{2, 2, 2, 2}}}), false);
               }});
  // auto_pad reaches plugins as the explicit pads core writes out (normalise_window_attributes);
  // the reference computes from auto_pad itself. Odd totals put the extra pad at the end
  // (SAME_UPPER) or the start (SAME_LOWER); SAME ignores ceil_mode.
  c.push_back({"ConvSameLowerStride2", [] {
                 return conv({1, 3, 9, 8}, {4, 3, 3, 3},
                             attrs({{"auto_pad", std::string("SAME_LOWER")}, {"strides", V{2, 2}}}),
                             true);
               }});
  c.push_back({"MaxPoolSameUpperCeil", [] {
                 return unary("MaxPool", {1, 2, 9, 8},
                              attrs({{"kernel_shape", V{3, 3}},
                                     {"strides", V{2, 2}},
                                     {"ceil_mode", int64_t{1}},
                                     {"auto_pad", std::string("SAME_UPPER")}}));
               }});
  c.push_back({"AveragePoolSameLowerIncludePad", [] {
                 return unary("AveragePool", {1, 2, 7, 8},
                              attrs({{"kernel_shape", V{3, 3}},
                                     {"strides", V{2, 2}},
                                     {"count_include_pad", int64_t{1}},
                                     {"auto_pad", std::string("SAME_LOWER")}}));
               }});
  c.push_back({"ConvDepthwise", [] {
                 return conv({1, 8, 7, 7}, {8, 1, 3, 3},
                             attrs({{"group", int64_t{8}}, {"pads", V{1, 1, 1, 1}}}), true);
               }});
  // Small-channel convs of exported vision nets, at odd sizes off the register-tile multiples:
  // a 1x1 conv reading its input in place (full column panels) with a partial last panel, 21
  // output channels, bias, a fused residual Add and Relu, batch 2; and a 3-channel stride-2 stem
  // whose 23-wide output rows end in a partial tile, with HardSwish after it.
  c.push_back({"Conv1x1ResidualReluBatch2", [] {
                 return GraphBuilder()
                     .input("x", {2, 19, 13, 11})
                     .input("r", {2, 21, 13, 11})
                     .constant("w", random_tensor({21, 19, 1, 1}, 61))
                     .constant("b", random_tensor({21}, 62))
                     .node("Conv", {"x", "w", "b"}, {"c"})
                     .node("Add", {"c", "r"}, {"a"})
                     .node("Relu", {"a"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"ConvStem3x3Stride2OddHardSwish", [] {
                 return GraphBuilder(14)
                     .input("x", {2, 3, 37, 45})
                     .constant("w", random_tensor({10, 3, 3, 3}, 63))
                     .constant("b", random_tensor({10}, 64))
                     .node("Conv", {"x", "w", "b"}, {"c"},
                           attrs({{"pads", V{1, 1, 1, 1}}, {"strides", V{2, 2}}}))
                     .node("HardSwish", {"c"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"ConvGrouped1x1", [] {
                 return conv({2, 6, 5, 5}, {4, 3, 1, 1}, attrs({{"group", int64_t{2}}}), true);
               }});
  c.push_back(
      {"MaxPool", [] {
         return unary(
             "MaxPool", {1, 3, 9, 9},
             attrs({{"kernel_shape", V{3, 3}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}}));
       }});
  c.push_back({"AveragePool", [] {
                 return unary("AveragePool", {1, 3, 8, 8},
                              attrs({{"kernel_shape", V{2, 2}}, {"strides", V{2, 2}}}));
               }});
  c.push_back({"GlobalAveragePool", [] { return unary("GlobalAveragePool", {2, 5, 4, 3}); }});
  c.push_back({"Gemm", [] {
                 return GraphBuilder()
                     .input("a", {3, 5})
                     .constant("b", random_tensor({4, 5}, 21))
                     .constant("c", random_tensor({4}, 22))
                     .node("Gemm", {"a", "b", "c"}, {"y"},
                           attrs({{"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}}))
                     .output("y")
                     .build();
               }});
  c.push_back({"MatMul", [] { return binary("MatMul", {2, 3, 4}, {4, 5}); }});
  c.push_back({"AddSameShape", [] { return binary("Add", {2, 3, 4}, {2, 3, 4}); }});
  c.push_back({"AddBroadcast", [] { return binary("Add", {2, 3, 4}, {3, 1}); }});
  c.push_back({"MulBroadcast", [] { return binary("Mul", {1, 4, 2, 2}, {4, 1, 1}); }});
  c.push_back({"SubScalar", [] { return binary("Sub", {2, 5}, {}); }});
  c.push_back({"Relu", [] { return unary("Relu", {2, 3, 4, 5}); }});
  c.push_back({"Sigmoid", [] { return unary("Sigmoid", {4, 7}); }});
  c.push_back({"Clip6", [] {
                 return GraphBuilder()
                     .input("x", {3, 8})
                     .constant("lo", Tensor::from_vector<float>({}, {0.0f}))
                     .constant("hi", Tensor::from_vector<float>({}, {0.5f}))
                     .node("Clip", {"x", "lo", "hi"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"Softmax", [] {
                 return unary("Softmax", {3, 10}, attrs({{"axis", int64_t{-1}}}));
               }});
  c.push_back({"Concat", [] {
                 return GraphBuilder()
                     .input("a", {1, 2, 3})
                     .input("b", {1, 4, 3})
                     .node("Concat", {"a", "b"}, {"y"}, attrs({{"axis", int64_t{1}}}))
                     .output("y")
                     .build();
               }});
  // Channel offsets that are not multiples of 4 (the texture plugins' channel blocks), batch 2.
  c.push_back({"ConcatChannelsRank4", [] {
                 return GraphBuilder()
                     .input("a", {2, 3, 4, 5})
                     .input("b", {2, 6, 4, 5})
                     .input("d", {2, 1, 4, 5})
                     .node("Concat", {"a", "b", "d"}, {"c"}, attrs({{"axis", int64_t{1}}}))
                     .node("Relu", {"c"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"Reshape", [] {
                 return GraphBuilder()
                     .input("x", {2, 3, 4})
                     .constant("shape", Tensor::from_vector<int64_t>({2}, {6, -1}))
                     .node("Reshape", {"x", "shape"}, {"y"})
                     .output("y")
                     .build();
               }});
  c.push_back({"Transpose", [] {
                 return unary("Transpose", {2, 3, 4}, attrs({{"perm", V{2, 0, 1}}}));
               }});
  // mobilevit's patch unfold: runs of 2 floats; over 8192 rows, so the copy splits into chunks
  // that start part way through the inner dim (3 rows).
  c.push_back({"TransposeShortRuns", [] {
                 return unary("Transpose", {131, 3, 37, 2}, attrs({{"perm", V{0, 2, 1, 3}}}));
               }});
  // The innermost output dim reads the source with a stride: 2-D tiles around the dim that
  // reads it with stride 1, here with a dim between them and ragged tiles on both sides.
  c.push_back({"TransposeStridedRuns", [] {
                 return unary("Transpose", {3, 7, 33, 41}, attrs({{"perm", V{0, 3, 2, 1}}}));
               }});
  // Attention's K^T per head, and NHWC -> NCHW (extents not multiples of the tile).
  c.push_back({"TransposeLastTwoAxes", [] {
                 return unary("Transpose", {2, 3, 37, 19}, attrs({{"perm", V{0, 1, 3, 2}}}));
               }});
  c.push_back({"TransposeToChannelsFirst", [] {
                 return unary("Transpose", {2, 17, 18, 35}, attrs({{"perm", V{0, 3, 1, 2}}}));
               }});
  c.push_back({"TransposeReverseAxes", [] {
                 return unary("Transpose", {5, 33, 20}, attrs({{"perm", V{2, 1, 0}}}));
               }});
  c.push_back({"ConvReluPoolChain", [] {
                 return GraphBuilder()
                     .input("x", {1, 3, 8, 8})
                     .constant("w", random_tensor({4, 3, 3, 3}, 31))
                     .node("Conv", {"x", "w"}, {"c"}, attrs({{"pads", V{1, 1, 1, 1}}}))
                     .node("Relu", {"c"}, {"r"})
                     .node("MaxPool", {"r"}, {"p"},
                           attrs({{"kernel_shape", V{2, 2}}, {"strides", V{2, 2}}}))
                     .node("Flatten", {"p"}, {"f"})
                     .constant("fw", random_tensor({10, 64}, 32))
                     .node("Gemm", {"f", "fw"}, {"g"}, attrs({{"transB", int64_t{1}}}))
                     .node("Softmax", {"g"}, {"y"})
                     .output("y")
                     .build();
               }});
  add_modern_network_cases(&c);
  add_op_set_cases(&c);
  add_pool_cases(&c);
  return c;
}

}  // namespace

const std::vector<DifferentialCase>& differential_cases() {
  static const std::vector<DifferentialCase> cases = make_cases();
  return cases;
}

std::vector<std::string> differential_case_names() {
  std::vector<std::string> names;
  for (const DifferentialCase& c : differential_cases()) names.push_back(c.name);
  return names;
}

const DifferentialCase* find_differential_case(const std::string& name) {
  for (const DifferentialCase& c : differential_cases()) {
    if (c.name == name) return &c;
  }
  ADD_FAILURE() << "no differential case named '" << name << "'";
  return nullptr;
}

void expect_outputs_match(const DifferentialCase& c, const std::vector<Tensor>& got,
                          const std::vector<Tensor>& want, const std::string& oracle,
                          const std::string& context) {
  ASSERT_EQ(got.size(), want.size()) << c.name << ": outputs against " << oracle;
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].dtype(), want[o].dtype()) << c.name << " output " << o << " vs " << oracle;
    ASSERT_EQ(got[o].shape(), want[o].shape()) << c.name << " output " << o << " vs " << oracle;
    if (want[o].dtype() == DType::kFloat32) {
      const float* g = got[o].data<float>();
      const float* w = want[o].data<float>();
      for (int64_t i = 0; i < want[o].numel(); ++i) {
        // A NaN where the oracle has one matches (TopK and ArgMax order them by rule).
        if (std::isnan(w[i])) {
          ASSERT_TRUE(std::isnan(g[i])) << c.name << " output " << o << " element " << i
                                        << ": got " << g[i] << ", " << oracle << " NaN" << context;
          continue;
        }
        ASSERT_LE(std::fabs(g[i] - w[i]), c.tolerance * (1.0 + std::fabs(w[i])))
            << c.name << " output " << o << " element " << i << ": got " << g[i] << ", " << oracle
            << " " << w[i] << context;
      }
    } else {
      ASSERT_EQ(std::memcmp(got[o].raw(), want[o].raw(), want[o].nbytes()), 0)
          << c.name << " output " << o << " vs " << oracle << context;
    }
  }
}

std::string differential_test_name(
    const ::testing::TestParamInfo<std::tuple<std::string, std::string>>& info) {
  return std::get<1>(info.param);
}

TEST_P(PluginDifferentialTest, MatchesReference) {
  const auto& [spec, case_name] = GetParam();
  const std::string plugin_name = spec.substr(0, spec.find(':'));
  const DifferentialCase* c = find_differential_case(case_name);
  ASSERT_NE(c, nullptr);

  PluginHostOptions host_options;
  host_options.use_environment = true;
  auto host = std::make_shared<const PluginHost>(host_options);
  auto plugin = host->find(plugin_name);
  if (!plugin) {
    std::string why = "not found in any searched directory";
    for (const PluginRefusal& r : host->refusals()) {
      if (r.name == plugin_name) why = "refused: " + r.reason;
    }
    FAIL() << "plugin '" << plugin_name << "' is not loaded: " << why;
  }
  const size_t colon = spec.find(':');
  const auto devices = plugin->probe(colon == std::string::npos ? "" : spec.substr(colon + 1));
  std::string unusable;
  bool usable = false;
  for (const PluginDeviceInfo& d : devices) {
    usable = usable || d.score > 0;
    unusable += " [" + d.name + ": " + d.unusable_reason + "]";
  }
  if (!usable) TESSERA_SKIP_WITHOUT("a device for plugin '" + plugin_name + "'") << unusable;

  const Graph graph = c->build();
  SessionOptions options;
  options.targets = {spec};
  if (plugin_name != "reference") options.targets.push_back("reference");
  Session session(graph, options, host);
  bool used = false;
  std::string reasons;
  for (const NodePlacement& p : session.plan().nodes) {
    used = used || p.plugin == plugin_name;
    reasons += "\n  " + p.node + ": " + p.reason;
  }
  const auto inputs = random_inputs(graph, 5);
  const std::vector<Tensor> got = session.run(inputs);
  const std::vector<Tensor> want = run_reference(graph, inputs);
  expect_outputs_match(*c, got, want, "the reference runner", " (placement:" + reasons + ")");
  if (HasFatalFailure()) return;
  if (!used) GTEST_SKIP() << "values match, but " << plugin_name << " took no node:" << reasons;
}

}  // namespace tessera::test
