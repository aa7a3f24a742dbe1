// Identity, Constant, Dropout, Cast and ConstantOfShape against hand-computed values.
#include <cmath>
#include <limits>

#include "op_test_util.hpp"

namespace tessera::test {
namespace {

TEST(Identity, AnyDtype) {
  const Tensor x = Tensor::from_vector<int8_t>({2}, {-5, 7});
  EXPECT_EQ(values<int8_t>(run1(make_node("Identity", {x}), 16, {x})),
            (std::vector<int8_t>{-5, 7}));
}

TEST(Constant, AttributeKinds) {
  Node node = make_node("Constant", {});
  node.attrs.set("value", i64({2}, {4, 5}));
  Tensor y = run1(node, 13, {});
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{4, 5}));

  Node floats = make_node("Constant", {});
  floats.attrs.set("value_floats", std::vector<float>{1.5f, -2});
  y = run1(floats, 13, {});
  EXPECT_EQ(y.shape(), (Shape{2}));
  expect_floats_near(y, {1.5f, -2});

  Node scalar = make_node("Constant", {});
  scalar.attrs.set("value_int", int64_t{9});
  y = run1(scalar, 13, {});
  EXPECT_EQ(y.shape(), Shape{});
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{9}));
}

TEST(Constant, SparseIsUnsupportedAndMissingIsAnError) {
  Node sparse = make_node("Constant", {}, 1, "sparse_const");
  sparse.attrs.set("sparse_value", i64({1}, {1}));
  EXPECT_THROW(infer(sparse, 13, {}), UnsupportedError);
  expect_infer_error(make_node("Constant", {}, 1, "empty_const"), 13, {}, "exactly one");
}

TEST(Dropout, InferenceIsIdentityWithTrueMask) {
  const Tensor x = f32({3}, {1, -2, 3});
  const Tensor ratio = f32({}, {0.5f});
  const std::vector<Tensor> outs = run(make_node("Dropout", {x, ratio}, 2), 13, {x, ratio});
  expect_floats_near(outs[0], {1, -2, 3});
  ASSERT_EQ(outs[1].dtype(), DType::kBool);
  EXPECT_EQ(values<bool>(outs[1]), (std::vector<bool>{true, true, true}));

  const Tensor training = Tensor::from_vector<bool>({}, {true});
  EXPECT_THROW(infer(make_node("Dropout", {x, ratio, training}), 13, {x, ratio, training}),
               UnsupportedError);
  const Tensor inference = Tensor::from_vector<bool>({}, {false});
  expect_floats_near(run1(make_node("Dropout", {x, ratio, inference}), 13, {x, ratio, inference}),
                     {1, -2, 3});
}

Tensor cast(const Tensor& x, DType to) {
  Node node = make_node("Cast", {x});
  node.attrs.set("to", static_cast<int64_t>(to));
  return run1(node, 13, {x});
}

TEST(Cast, FloatToIntTruncatesAndSaturates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = f32({6}, {2.7f, -2.7f, 0.5f, -0.5f, 1e10f, nan});
  EXPECT_EQ(values<int32_t>(cast(x, DType::kInt32)),
            (std::vector<int32_t>{2, -2, 0, 0, 2147483647, 0}));
  EXPECT_EQ(values<int64_t>(cast(x, DType::kInt64)),
            (std::vector<int64_t>{2, -2, 0, 0, 10000000000, 0}));
  EXPECT_EQ(values<uint8_t>(cast(f32({3}, {-1, 300, 3.9f}), DType::kUInt8)),
            (std::vector<uint8_t>{0, 255, 3}));
  EXPECT_EQ(values<int8_t>(cast(f32({2}, {-200, 127.9f}), DType::kInt8)),
            (std::vector<int8_t>{-128, 127}));
}

TEST(Cast, IntegerBoolAndHalf) {
  // 2^32 + 5 wraps to 5 in int32, as numpy's astype does.
  EXPECT_EQ(values<int32_t>(cast(i64({2}, {4294967301LL, -1}), DType::kInt32)),
            (std::vector<int32_t>{5, -1}));
  EXPECT_EQ(values<bool>(cast(f32({3}, {0, -0.0f, 0.1f}), DType::kBool)),
            (std::vector<bool>{false, false, true}));
  expect_floats_near(cast(Tensor::from_vector<bool>({2}, {true, false}), DType::kFloat32), {1, 0});
  // 1/3 rounds to the nearest half 0x3555 = 0.333251953125; 2049 is a tie, rounding to even 2048.
  const Tensor h = cast(f32({2}, {1.0f / 3.0f, 2049}), DType::kFloat16);
  EXPECT_EQ(h.data<uint16_t>()[0], 0x3555);
  EXPECT_EQ(half_to_float(h.data<uint16_t>()[1]), 2048.0f);
  expect_floats_near(cast(h, DType::kFloat32), {0.333251953125f, 2048});
  EXPECT_EQ(values<int64_t>(cast(i32({2}, {-7, 8}), DType::kInt64)), (std::vector<int64_t>{-7, 8}));
}

TEST(Cast, UnknownTargetIsUnsupported) {
  const Tensor x = f32({1}, {1});
  Node node = make_node("Cast", {x});
  node.attrs.set("to", int64_t{8});  // STRING
  EXPECT_THROW(infer(node, 13, {x}), UnsupportedError);
}

TEST(ConstantOfShape, ValueDefaultAndScalar) {
  const Tensor shape = i64({2}, {2, 3});
  Node node = make_node("ConstantOfShape", {shape});
  node.attrs.set("value", i64({1}, {7}));
  const Tensor y = run1(node, 13, {shape});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>(6, 7)));

  const Tensor zeros = run1(make_node("ConstantOfShape", {shape}), 13, {shape});
  expect_floats_near(zeros, std::vector<float>(6, 0.0f));

  const Tensor none = i64({0}, {});
  const Tensor scalar = run1(node, 13, {none});
  EXPECT_EQ(scalar.shape(), Shape{});
  EXPECT_EQ(values<int64_t>(scalar), (std::vector<int64_t>{7}));
}

}  // namespace
}  // namespace tessera::test
