// Activations (Relu, LeakyRelu, PRelu, Sigmoid, HardSigmoid, HardSwish, Tanh, Clip) against
// hand-computed values.
#include "op_test_util.hpp"

namespace tessera::test {
namespace {

TEST(Relu, Float32AndInt32) {
  expect_floats_near(run1(make_node("Relu", {Tensor()}), 14, {f32({3}, {-1, 0, 2.5f})}),
                     {0, 0, 2.5f});
  const Tensor y = run1(make_node("Relu", {Tensor()}), 14, {i32({2}, {-3, 4})});
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{0, 4}));
}

TEST(LeakyRelu, DefaultAndExplicitAlpha) {
  Node node = make_node("LeakyRelu", {Tensor()});
  expect_floats_near(run1(node, 16, {f32({2}, {-1, 3})}), {-0.01f, 3});
  node.attrs.set("alpha", 0.1f);
  expect_floats_near(run1(node, 16, {f32({2}, {-2, 3})}), {-0.2f, 3});
}

TEST(PRelu, SlopeBroadcastsToX) {
  const Node node = make_node("PRelu", {Tensor(), Tensor()});
  // X [2, 2], slope [2, 1]: row r uses slope[r].
  expect_floats_near(run1(node, 16, {f32({2, 2}, {-1, 2, -3, 4}), f32({2, 1}, {0.5f, 0.25f})}),
                     {-0.5f, 2, -0.75f, 4});
  // A slope that would grow the output is rejected: PRelu broadcasts in one direction only.
  expect_infer_error(node, 16, {f32({2}, {1, 2}), f32({3, 1}, {1, 2, 3})}, "slope shape");
}

TEST(Sigmoid, ValuesIncludingLargeMagnitudes) {
  const Node node = make_node("Sigmoid", {Tensor()});
  // 1 / (1 + e^-2) = 0.8807970779778823
  expect_floats_near(run1(node, 13, {f32({5}, {0, 2, -2, 100, -100})}),
                     {0.5f, 0.880797078f, 0.119202922f, 1.0f, 0.0f});
}

TEST(Sigmoid, Float16ComputesThroughFloat32) {
  Tensor x(DType::kFloat16, {2});
  x.data<uint16_t>()[0] = float_to_half(0.0f);
  x.data<uint16_t>()[1] = float_to_half(-100.0f);
  const Tensor y = run1(make_node("Sigmoid", {x}), 13, {x});
  EXPECT_EQ(half_to_float(y.data<uint16_t>()[0]), 0.5f);
  EXPECT_EQ(half_to_float(y.data<uint16_t>()[1]), 0.0f);
}

TEST(HardSigmoid, DefaultsAndAttributes) {
  Node node = make_node("HardSigmoid", {Tensor()});
  // 0.2 * x + 0.5 clamped to [0, 1].
  expect_floats_near(run1(node, 6, {f32({3}, {1, -3, 3})}), {0.7f, 0.0f, 1.0f});
  node.attrs.set("alpha", 0.5f);
  node.attrs.set("beta", 0.1f);
  expect_floats_near(run1(node, 6, {f32({1}, {1})}), {0.6f});
}

TEST(HardSwish, PiecewiseValues) {
  // x * clamp(x / 6 + 0.5, 0, 1): zero below -3, x above 3, quadratic in between.
  expect_floats_near(
      run1(make_node("HardSwish", {Tensor()}), 14, {f32({7}, {-4, -3, -1, 0, 1, 3, 4})}),
      {0, 0, -1.0f / 3.0f, 0, 2.0f / 3.0f, 3, 4});
}

TEST(Tanh, Values) {
  expect_floats_near(run1(make_node("Tanh", {Tensor()}), 13, {f32({3}, {0.5f, -1, 0})}),
                     {0.462117157f, -0.761594156f, 0});
}

TEST(Clip, AttributeFormBeforeOpset11) {
  Node node = make_node("Clip", {Tensor()});
  node.attrs.set("min", -1.0f);
  node.attrs.set("max", 2.0f);
  expect_floats_near(run1(node, 6, {f32({5}, {-3, -1, 0.5f, 2, 5})}), {-1, -1, 0.5f, 2, 2});
  Node min_only = make_node("Clip", {Tensor()});
  min_only.attrs.set("min", -1.0f);
  expect_floats_near(run1(min_only, 6, {f32({2}, {-3, 5e30f})}), {-1, 5e30f});
}

TEST(Clip, InputFormWithOptionalBounds) {
  const Tensor x = f32({2}, {-3, 5});
  // min only.
  const Tensor lo = f32({}, {0});
  expect_floats_near(run1(make_node("Clip", {x, lo}), 13, {x, lo}), {0, 5});
  // max only: min is an omitted optional input.
  const Tensor hi = f32({}, {1});
  expect_floats_near(run1(make_node("Clip", {x, Tensor(), hi}), 13, {x, Tensor(), hi}), {-3, 1});
  // No bounds at all: identity.
  expect_floats_near(run1(make_node("Clip", {x}), 13, {x}), {-3, 5});
}

TEST(Clip, Int64AndFloat16) {
  const Tensor x = i64({3}, {-5, 0, 7});
  const Tensor lo = i64({}, {-2});
  const Tensor hi = i64({}, {2});
  const Tensor y = run1(make_node("Clip", {x, lo, hi}), 13, {x, lo, hi});
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{-2, 0, 2}));

  Tensor h(DType::kFloat16, {3});
  Tensor hlo(DType::kFloat16, {});
  Tensor hhi(DType::kFloat16, {});
  const float in[3] = {-3, 0.5f, 5};
  for (int i = 0; i < 3; ++i) h.data<uint16_t>()[i] = float_to_half(in[i]);
  hlo.data<uint16_t>()[0] = float_to_half(-1);
  hhi.data<uint16_t>()[0] = float_to_half(2);
  const Tensor hy = run1(make_node("Clip", {h, hlo, hhi}), 13, {h, hlo, hhi});
  EXPECT_EQ(half_to_float(hy.data<uint16_t>()[0]), -1.0f);
  EXPECT_EQ(half_to_float(hy.data<uint16_t>()[1]), 0.5f);
  EXPECT_EQ(half_to_float(hy.data<uint16_t>()[2]), 2.0f);
}

TEST(Clip, BoundOfWrongDtypeOrShapeIsRejected) {
  const Tensor x = f32({2}, {1, 2});
  const Tensor lo_int = i64({}, {0});
  expect_infer_error(make_node("Clip", {x, lo_int}), 13, {x, lo_int}, "'min' has dtype int64");
  const Tensor lo_vec = f32({2}, {0, 0});
  expect_infer_error(make_node("Clip", {x, lo_vec}), 13, {x, lo_vec}, "must be a scalar");
}

TEST(Activations, RejectIntegerInput) {
  const Tensor x = i64({1}, {1});
  EXPECT_THROW(infer(make_node("Sigmoid", {x}), 13, {x}), UnsupportedError);
}

}  // namespace
}  // namespace tessera::test
