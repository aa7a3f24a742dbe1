// Graph pass tests: shape inference, constant folding of the shape subgraphs PyTorch exports,
// the folding size limit, and errors that name the node and file.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "model_builder.hpp"
#include "op.hpp"
#include "tessera/onnx_import.hpp"
#include "tessera/passes.hpp"
#include "tessera/reference_runner.hpp"

namespace tessera {
namespace {

using test::ModelBuilder;

// Y = Reshape(Relu(X), Concat(Unsqueeze(Gather(Shape(X), 0)), [-1])): X [2,3,4] -> Y [2,12].
ModelBuilder shape_chain_model() {
  ModelBuilder m(13);
  m.input("X", onnx::TensorProto::FLOAT, {2, 3, 4});
  m.node("Relu", {"X"}, {"R"}, "relu");
  m.node("Shape", {"X"}, {"S"}, "shape");
  m.raw_int64("zero", {}, {0});
  m.raw_int64("axes0", {1}, {0});
  m.raw_int64("minus1", {1}, {-1});
  m.node("Gather", {"S", "zero"}, {"B"}, "gather");
  m.node("Unsqueeze", {"B", "axes0"}, {"B1"}, "unsqueeze");
  ModelBuilder::add_int_attr(m.node("Concat", {"B1", "minus1"}, {"NewShape"}, "concat"), "axis", 0);
  m.node("Reshape", {"R", "NewShape"}, {"Y"}, "reshape");
  m.output("Y", onnx::TensorProto::FLOAT, {2, 12});
  return m;
}

TEST(Passes, FoldsShapeGatherUnsqueezeConcatChain) {
  const Graph g = import_onnx_bytes(shape_chain_model().bytes(), "chain.onnx", "");
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op_type, "Relu");
  EXPECT_EQ(g.nodes[1].op_type, "Reshape");
  const Value& new_shape = g.value(g.find_value("NewShape"));
  ASSERT_TRUE(new_shape.constant);
  EXPECT_EQ(new_shape.constant->to_int64_vector(), (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(g.value(g.find_value("Y")).shape, (Shape{2, 12}));

  std::vector<float> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 12.0f;
  const auto out = run_reference(g, {{"X", Tensor::from_vector<float>({2, 3, 4}, x)}});
  ASSERT_EQ(out[0].shape(), (Shape{2, 12}));
  const std::vector<float> y = out[0].to_float_vector();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], std::max(x[i], 0.0f)) << i;
}

TEST(Passes, InferShapesAloneCannotSeeThroughTheChainButFoldingCan) {
  ImportOptions opts;
  opts.prepare = false;
  Graph g = import_onnx_bytes(shape_chain_model().bytes(), "chain.onnx", "", opts);
  EXPECT_EQ(g.nodes.size(), 6u);
  // Reshape's shape input is not a constant without folding.
  EXPECT_THROW(infer_shapes(g), UnsupportedError);
  prepare_graph(g);
  EXPECT_EQ(g.nodes.size(), 2u);
}

TEST(Passes, LargeConstantResultsAreNotFolded) {
  ModelBuilder m;
  m.raw_float("A", {4}, {1, 2, 3, 4});
  m.raw_float("B", {4}, {10, 20, 30, 40});
  m.input("X", onnx::TensorProto::FLOAT, {4});
  m.node("Add", {"A", "B"}, {"C"});
  m.node("Mul", {"X", "C"}, {"Y"});
  m.output("Y", onnx::TensorProto::FLOAT, {4});
  ImportOptions opts;
  opts.prepare = false;

  Graph small = import_onnx_bytes(m.bytes(), "fold.onnx", "", opts);
  fold_constants(small, 3);  // C has 4 elements: stays a node
  EXPECT_EQ(small.nodes.size(), 2u);
  EXPECT_FALSE(small.value(small.find_value("C")).constant);

  Graph big = import_onnx_bytes(m.bytes(), "fold.onnx", "", opts);
  fold_constants(big, 4);
  ASSERT_EQ(big.nodes.size(), 1u);
  EXPECT_EQ(big.value(big.find_value("C")).constant->to_float_vector(),
            (std::vector<float>{11, 22, 33, 44}));

  for (const Graph* g : {&small, &big}) {
    const auto out = run_reference(*g, {{"X", Tensor::from_vector<float>({4}, {1, 1, 2, 2})}});
    EXPECT_EQ(out[0].to_float_vector(), (std::vector<float>{11, 22, 66, 88}));
  }
}

TEST(Passes, DeclaredOutputShapeThatContradictsInferenceNamesTheValue) {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {2, 3});
  m.node("Relu", {"X"}, {"Y"}, "act");
  m.output("Y", onnx::TensorProto::FLOAT, {3, 2});
  try {
    import_onnx_bytes(m.bytes(), "declared.onnx", "");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("declared.onnx"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'act'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'Y'"), std::string::npos) << msg;
  }
  ModelBuilder d;
  d.input("X", onnx::TensorProto::FLOAT, {2, 3});
  d.node("Relu", {"X"}, {"Y"}, "act");
  d.output("Y", onnx::TensorProto::INT64, {2, 3});
  try {
    import_onnx_bytes(d.bytes(), "declared.onnx", "");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("int64"), std::string::npos) << e.what();
  }
}

TEST(Passes, InferenceErrorsNameNodeAndFile) {
  ModelBuilder m;
  m.input("A", onnx::TensorProto::FLOAT, {2, 3});
  m.input("B", onnx::TensorProto::FLOAT, {4});
  m.node("Add", {"A", "B"}, {"Y"}, "bad_add");
  m.output("Y", onnx::TensorProto::FLOAT);
  try {
    import_onnx_bytes(m.bytes(), "broadcast.onnx", "");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("broadcast.onnx"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'bad_add'"), std::string::npos) << msg;
  }
}

TEST(Passes, ConstantNodesFoldAndDeadNodesGo) {
  ModelBuilder m;
  m.input("X", onnx::TensorProto::FLOAT, {2});
  auto* c = m.node("Constant", {}, {"K"}, "k");
  auto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a->mutable_t()->add_dims(2);
  a->mutable_t()->add_float_data(0.5f);
  a->mutable_t()->add_float_data(-1);
  m.node("Relu", {"X"}, {"Unused"}, "dead");
  m.node("Mul", {"X", "K"}, {"Y"}, "mul");
  m.output("Y", onnx::TensorProto::FLOAT, {2});
  const Graph g = import_onnx_bytes(m.bytes(), "const.onnx", "");
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].name, "mul");
  const auto out = run_reference(g, {{"X", Tensor::from_vector<float>({2}, {4, 4})}});
  EXPECT_EQ(out[0].to_float_vector(), (std::vector<float>{2, -4}));
}

// Resize's sizes as PyTorch's F.interpolate(size=...) exports them: Concat(Slice(Shape(X), 0, 2),
// [4, 6]). Folding makes them a constant, so the output shape is known at load time; roi (which
// decides values, not the shape) stays a graph input and is read when the kernel runs.
TEST(Passes, ResizeSizesFromAShapeChainAndRoiAtRunTime) {
  ModelBuilder m(13);
  m.input("X", onnx::TensorProto::FLOAT, {1, 1, 2, 3});
  m.node("Shape", {"X"}, {"S"}, "shape");
  m.raw_int64("starts", {1}, {0});
  m.raw_int64("ends", {1}, {2});
  m.raw_int64("hw", {2}, {4, 6});
  m.node("Slice", {"S", "starts", "ends"}, {"NC"}, "slice");
  ModelBuilder::add_int_attr(m.node("Concat", {"NC", "hw"}, {"Sizes"}, "concat"), "axis", 0);
  m.raw_float("no_scales", {0}, {});
  m.node("Resize", {"X", "", "no_scales", "Sizes"}, {"Y"}, "resize");
  m.output("Y", onnx::TensorProto::FLOAT, {1, 1, 4, 6});
  const Graph g = import_onnx_bytes(m.bytes(), "resize.onnx", "");
  EXPECT_EQ(g.value(g.find_value("Y")).shape, (Shape{1, 1, 4, 6}));
  // Nearest, half_pixel, x2 on both axes: every input element becomes a 2x2 block.
  const auto out =
      run_reference(g, {{"X", Tensor::from_vector<float>({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6})}});
  const std::vector<float> y = out[0].to_float_vector();
  for (size_t i = 0; i < y.size(); ++i) {
    const size_t r = i / 6 / 2, c = i % 6 / 2;
    EXPECT_EQ(y[i], static_cast<float>(r * 3 + c + 1)) << i;
  }

  ModelBuilder crop(13);
  crop.input("X", onnx::TensorProto::FLOAT, {1, 1, 4, 4});
  crop.input("roi", onnx::TensorProto::FLOAT, {8});
  crop.raw_float("no_scales", {0}, {});
  crop.raw_int64("sizes", {4}, {1, 1, 3, 3});
  auto* n = crop.node("Resize", {"X", "roi", "no_scales", "sizes"}, {"Y"}, "crop");
  auto* a = n->add_attribute();
  a->set_name("coordinate_transformation_mode");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("tf_crop_and_resize");
  auto* mode = n->add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("linear");
  crop.output("Y", onnx::TensorProto::FLOAT, {1, 1, 3, 3});
  const Graph cg = import_onnx_bytes(crop.bytes(), "crop.onnx", "");
  std::vector<float> x(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i + 1);
  const auto cy = run_reference(
      cg, {{"X", Tensor::from_vector<float>({1, 1, 4, 4}, x)},
           {"roi", Tensor::from_vector<float>({8}, {0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f})}});
  // ONNX Runtime 1.32 gives these for the same node (tests/ops_nn/ort_crosscheck_test.cpp).
  const std::vector<float> expected = {7.6f, 7.9f, 8.2f, 8.8f, 9.1f, 9.4f, 10, 10.3f, 10.6f};
  const std::vector<float> got = cy[0].to_float_vector();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-4f) << i;
}

// X [1,2,3,4] -> Pad(pads) -> Relu -> Y, with Pad's output also a graph output when asked.
ModelBuilder pad_relu_model(const std::vector<int64_t>& pads, bool pad_is_output) {
  ModelBuilder m(13);
  m.input("X", onnx::TensorProto::FLOAT, {1, 2, 3, 4});
  m.raw_int64("pads", {8}, pads);
  m.node("Pad", {"X", "pads"}, {"P"}, "pad");
  m.node("Relu", {"P"}, {"Y"}, "relu");
  const int64_t h = 3 + pads[2] + pads[6], w = 4 + pads[3] + pads[7];
  m.output("Y", onnx::TensorProto::FLOAT, {1, 2, h, w});
  if (pad_is_output) m.output("P", onnx::TensorProto::FLOAT, {1, 2, h, w});
  return m;
}

TEST(Passes, PadOfZerosIsBypassedAndTheValuesAreTheSame) {
  const Graph g =
      import_onnx_bytes(pad_relu_model({0, 0, 0, 0, 0, 0, 0, 0}, false).bytes(), "p.onnx", "");
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Relu");
  std::vector<float> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f - 6.0f;
  const auto out = run_reference(g, {{"X", Tensor::from_vector<float>({1, 2, 3, 4}, x)}});
  ASSERT_EQ(out[0].shape(), (Shape{1, 2, 3, 4}));
  const std::vector<float> y = out[0].to_float_vector();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], std::max(x[i], 0.0f)) << i;
}

TEST(Passes, PadThatPadsOrIsAGraphOutputStays) {
  const Graph padding =
      import_onnx_bytes(pad_relu_model({0, 0, 1, 0, 0, 0, 0, 1}, false).bytes(), "p.onnx", "");
  ASSERT_EQ(padding.nodes.size(), 2u);
  EXPECT_EQ(padding.nodes[0].op_type, "Pad");
  EXPECT_EQ(padding.value(padding.find_value("Y")).shape, (Shape{1, 2, 4, 5}));
  const Graph output =
      import_onnx_bytes(pad_relu_model({0, 0, 0, 0, 0, 0, 0, 0}, true).bytes(), "p.onnx", "");
  ASSERT_EQ(output.nodes.size(), 2u);
  std::vector<float> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 12.0f;
  const auto out = run_reference(output, {{"X", Tensor::from_vector<float>({1, 2, 3, 4}, x)}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].to_float_vector(), x);  // P: the input, unpadded
}

// X -> Dropout(ratio, training_mode) -> Relu -> Y, as torchvision's swin_t exports its attention
// dropout (training_mode true, ratio 0), with the mask output nobody reads.
ModelBuilder dropout_model(float ratio) {
  ModelBuilder m(13);
  m.input("X", onnx::TensorProto::FLOAT, {2, 3});
  m.raw_float("ratio", {}, {ratio});
  const bool training = true;
  m.raw("training", onnx::TensorProto::BOOL, {}, &training, 1);
  m.node("Dropout", {"X", "ratio", "training"}, {"D", "mask"}, "drop");
  m.node("Relu", {"D"}, {"Y"}, "relu");
  m.output("Y", onnx::TensorProto::FLOAT, {2, 3});
  return m;
}

TEST(Passes, TrainingDropoutOfRatioZeroBecomesAnInferenceDropout) {
  const Graph g = import_onnx_bytes(dropout_model(0.0f).bytes(), "drop.onnx", "");
  ASSERT_EQ(g.nodes.size(), 2u);
  const Node& drop = g.nodes[0];
  ASSERT_EQ(drop.op_type, "Dropout");
  ASSERT_EQ(drop.inputs.size(), 3u);
  EXPECT_EQ(drop.inputs[2], kNoValue);  // training_mode cleared
  EXPECT_EQ(drop.outputs.size(), 1u);   // the unread mask dropped
  const std::vector<float> x = {-1, 2, -3, 4, 0.5f, -0.25f};
  const auto out = run_reference(g, {{"X", Tensor::from_vector<float>({2, 3}, x)}});
  const std::vector<float> y = out[0].to_float_vector();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], std::max(x[i], 0.0f)) << i;
}

TEST(Passes, TrainingDropoutThatDropsIsRefusedNamingTheNode) {
  try {
    import_onnx_bytes(dropout_model(0.5f).bytes(), "drop.onnx", "");
    FAIL() << "expected an UnsupportedError";
  } catch (const UnsupportedError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'drop'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("ratio is 0.5"), std::string::npos) << msg;
  }
}

// Y = Einsum("byhwc,hkc->byhwk", X, R) as mvitv2 writes its relative-position term.
ModelBuilder einsum_model(const std::string& equation, const std::vector<int64_t>& x_shape,
                          const std::vector<int64_t>& r_shape, const std::vector<float>& r,
                          const std::vector<int64_t>& y_shape) {
  ModelBuilder m(13);
  m.input("X", onnx::TensorProto::FLOAT, x_shape);
  m.raw_float("R", r_shape, r);
  auto* n = m.node("Einsum", {"X", "R"}, {"Y"}, "einsum");
  auto* a = n->add_attribute();
  a->set_name("equation");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(equation);
  m.output("Y", onnx::TensorProto::FLOAT, y_shape);
  return m;
}

std::vector<float> ramp(size_t n, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * step);
  return v;
}

TEST(Passes, TwoOperandEinsumBecomesMatMulWithTheKernelsValues) {
  const std::vector<float> r = ramp(4 * 7 * 6, 0.37f);
  const Graph g = import_onnx_bytes(
      einsum_model("byhwc,hkc->byhwk", {2, 3, 4, 5, 6}, {4, 7, 6}, r, {2, 3, 4, 5, 7}).bytes(),
      "einsum.onnx", "");
  std::map<std::string, int> ops_seen;
  for (const Node& n : g.nodes) ++ops_seen[n.op_type];
  EXPECT_EQ(ops_seen.count("Einsum"), 0u);
  EXPECT_EQ(ops_seen["MatMul"], 1);
  const Tensor x = Tensor::from_vector<float>({2, 3, 4, 5, 6}, ramp(720, 0.11f));
  const auto out = run_reference(g, {{"X", x}});
  // The oracle: the Einsum kernel itself on the same inputs.
  Node einsum;
  einsum.name = "einsum";
  einsum.op_type = "Einsum";
  einsum.inputs = {0, 1};
  einsum.outputs = {2};
  einsum.attrs.set("equation", std::string("byhwc,hkc->byhwk"));
  const Tensor rt = Tensor::from_vector<float>({4, 7, 6}, r);
  std::vector<ops::InputInfo> infos = {{true, DType::kFloat32, x.shape(), nullptr},
                                       {true, DType::kFloat32, rt.shape(), &rt}};
  const auto want =
      ops::compute_node(einsum, 13, {&x, &rt}, ops::infer_node(einsum, 13, "t", infos));
  ASSERT_EQ(out[0].shape(), want[0].shape());
  const std::vector<float> got = out[0].to_float_vector(), ref = want[0].to_float_vector();
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(got[i], ref[i], 1e-5f) << i;
}

TEST(Passes, EinsumOutsideTheMatMulFormStays) {
  // A diagonal (a subscript twice in one input) is no MatMul.
  const Graph g = import_onnx_bytes(
      einsum_model("ii,ij->ij", {3, 3}, {3, 2}, ramp(6, 0.5f), {3, 2}).bytes(), "einsum.onnx", "");
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Einsum");
}

// CastLike(x, like) becomes Cast(x, to = like's dtype) once prepared, so plugins that run Cast
// take it; the values are the CastLike kernel's (float -> int64 truncates toward zero).
TEST(Passes, CastLikeBecomesACastToTheSecondInputsType) {
  ModelBuilder m(15);
  m.input("X", onnx::TensorProto::FLOAT, {2, 3});
  m.raw_int64("Like", {1}, {0});
  m.node("CastLike", {"X", "Like"}, {"Y"}, "cast_like");
  m.output("Y", onnx::TensorProto::INT64, {2, 3});
  const Graph g = import_onnx_bytes(m.bytes(), "cast_like.onnx", "");
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Cast");
  ASSERT_EQ(g.nodes[0].inputs.size(), 1u);
  EXPECT_EQ(g.nodes[0].attrs.get_int("to"), static_cast<int64_t>(DType::kInt64));
  const std::vector<float> x = {-1.5f, 2.7f, -0.2f, 40.9f, 0.0f, -7.99f};
  const auto out = run_reference(g, {{"X", Tensor::from_vector<float>({2, 3}, x)}});
  EXPECT_EQ(out[0].to_int64_vector(), (std::vector<int64_t>{-1, 2, 0, 40, 0, -7}));

  ImportOptions opts;
  opts.prepare = false;
  const Graph raw = import_onnx_bytes(m.bytes(), "cast_like.onnx", "", opts);
  ASSERT_EQ(raw.nodes[0].op_type, "CastLike");
  const auto direct = run_reference(raw, {{"X", Tensor::from_vector<float>({2, 3}, x)}});
  EXPECT_EQ(direct[0].to_int64_vector(), out[0].to_int64_vector());
}

}  // namespace
}  // namespace tessera
