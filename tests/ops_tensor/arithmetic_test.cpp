// Broadcasting helpers and the broadcasting ops (Add, Sub, Mul, Div, Equal, Where, Expand) plus
// Range, against hand-computed values.
#include <cmath>
#include <limits>

#include "op_test_util.hpp"
#include "util/broadcast.hpp"

namespace tessera::test {
namespace {

using ops::broadcast_shapes;
using ops::BroadcastIndexer;

TEST(Broadcast, Shapes) {
  EXPECT_EQ(broadcast_shapes(Shape{2, 3, 1}, Shape{4}, "w"), (Shape{2, 3, 4}));
  EXPECT_EQ(broadcast_shapes(Shape{}, Shape{5}, "w"), (Shape{5}));
  EXPECT_EQ(broadcast_shapes(Shape{1, 0}, Shape{3, 1}, "w"), (Shape{3, 0}));
  EXPECT_EQ(broadcast_shapes(std::vector<Shape>{{2, 1, 1}, {1, 3, 1}, {4}}, "w"), (Shape{2, 3, 4}));
  try {
    broadcast_shapes(Shape{2, 3}, Shape{4}, "node 'x' (Add)");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'x' (Add): cannot broadcast shapes [2, 3] and [4]"),
              std::string::npos)
        << e.what();
  }
}

TEST(Broadcast, IndexerMapsOutputToInputOffsets) {
  // Input [3, 1] inside output [2, 3, 2]: offset is the middle coordinate.
  const BroadcastIndexer idx(Shape{3, 1}, Shape{2, 3, 2});
  const std::vector<int64_t> expected = {0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2};
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(idx.offset(i), expected[static_cast<size_t>(i)]) << i;
  EXPECT_THROW(BroadcastIndexer(Shape{3}, Shape{2, 2}), Error);
}

TEST(Add, BroadcastRank3WithVector) {
  // a[i, j, 0] = 3i + j; out[i, j, k] = a[i, j] + 10k.
  const Tensor a = f32({2, 3, 1}, {0, 1, 2, 3, 4, 5});
  const Tensor b = f32({4}, {0, 10, 20, 30});
  const Tensor y = run1(make_node("Add", {a, b}), 14, {a, b});
  EXPECT_EQ(y.shape(), (Shape{2, 3, 4}));
  expect_floats_near(y, {0, 10, 20, 30, 1, 11, 21, 31, 2, 12, 22, 32,
                         3, 13, 23, 33, 4, 14, 24, 34, 5, 15, 25, 35});
}

TEST(Add, Int64ShapeArithmetic) {
  const Tensor a = i64({2}, {1, 224});
  const Tensor b = i64({}, {2});
  EXPECT_EQ(values<int64_t>(run1(make_node("Add", {a, b}), 14, {a, b})),
            (std::vector<int64_t>{3, 226}));
}

TEST(Sub, OperandOrderWithScalar) {
  const Tensor v = f32({3}, {5, 6, 7});
  const Tensor s = f32({}, {1});
  expect_floats_near(run1(make_node("Sub", {v, s}), 14, {v, s}), {4, 5, 6});
  expect_floats_near(run1(make_node("Sub", {s, v}), 14, {s, v}), {-4, -5, -6});
}

TEST(Mul, BothSidesBroadcast) {
  const Tensor a = f32({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = f32({1, 2, 1}, {10, 100});
  const Tensor y = run1(make_node("Mul", {a, b}), 14, {a, b});
  EXPECT_EQ(y.shape(), (Shape{2, 2, 3}));
  expect_floats_near(y, {10, 20, 30, 100, 200, 300, 40, 50, 60, 400, 500, 600});
}

TEST(Div, FloatAndIntegerTruncatesTowardZero) {
  const Tensor a = f32({2}, {1, -3});
  const Tensor b = f32({1}, {2});
  expect_floats_near(run1(make_node("Div", {a, b}), 14, {a, b}), {0.5f, -1.5f});
  // ONNX Runtime and the ONNX reference give 7/2=3, -7/2=-3 (not numpy's floor -4).
  const Tensor x = i64({4}, {7, -7, 7, -7});
  const Tensor d = i64({4}, {2, 2, -2, -2});
  EXPECT_EQ(values<int64_t>(run1(make_node("Div", {x, d}), 14, {x, d})),
            (std::vector<int64_t>{3, -3, -3, 3}));
  const Tensor x32 = i32({2}, {-9, 9});
  const Tensor d32 = i32({}, {4});
  EXPECT_EQ(values<int32_t>(run1(make_node("Div", {x32, d32}), 14, {x32, d32})),
            (std::vector<int32_t>{-2, 2}));
}

TEST(Div, IntegerDivisionByZeroNamesTheNode) {
  const Tensor x = i64({1}, {1});
  const Tensor z = i64({1}, {0});
  const Node node = make_node("Div", {x, z}, 1, "div_by_zero");
  try {
    run1(node, 14, {x, z});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'div_by_zero'"), std::string::npos) << e.what();
  }
}

TEST(Add, LegacyBroadcastAttributeBeforeOpset7) {
  const Tensor a = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  Node node = make_node("Add", {a, Tensor()});
  node.attrs.set("broadcast", int64_t{1});
  const Tensor row = f32({3}, {10, 20, 30});
  expect_floats_near(run1(node, 6, {a, row}), {10, 21, 32, 13, 24, 35});
  // axis=0 lines B up with A's first dim.
  node.attrs.set("axis", int64_t{0});
  const Tensor col = f32({2}, {100, 200});
  expect_floats_near(run1(node, 6, {a, col}), {100, 101, 102, 203, 204, 205});
  // Without broadcast=1 the shapes must match.
  expect_infer_error(make_node("Add", {a, row}, 1, "legacy_add"), 6, {a, row}, "'broadcast'");
}

TEST(Add, BadInputsNameTheNode) {
  const Tensor a = f32({2, 3}, {0, 0, 0, 0, 0, 0});
  const Tensor b = f32({4}, {0, 0, 0, 0});
  expect_infer_error(make_node("Add", {a, b}, 1, "bad_add"), 14, {a, b},
                     "cannot broadcast shapes [2, 3] and [4]");
  const Tensor c = i64({3}, {0, 0, 0});
  expect_infer_error(make_node("Mul", {a, c}, 1, "mixed_mul"), 14, {a, c}, "different dtypes");
}

TEST(Equal, BroadcastToBool) {
  const Tensor a = i64({3}, {1, 2, 1});
  const Tensor b = i64({}, {1});
  const Tensor y = run1(make_node("Equal", {a, b}), 13, {a, b});
  ASSERT_EQ(y.dtype(), DType::kBool);
  EXPECT_EQ(values<bool>(y), (std::vector<bool>{true, false, true}));
}

TEST(Where, ThreeWayBroadcast) {
  const Tensor cond = Tensor::from_vector<bool>({2, 1}, {true, false});
  const Tensor x = i64({3}, {1, 2, 3});
  const Tensor y = i64({}, {0});
  const Tensor out = run1(make_node("Where", {cond, x, y}), 16, {cond, x, y});
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>(out), (std::vector<int64_t>{1, 2, 3, 0, 0, 0}));
}

TEST(Expand, BidirectionalBroadcast) {
  const Tensor x = f32({3, 1}, {1, 2, 3});
  const Tensor shape = i64({3}, {2, 1, 2});  // the 1 keeps x's 3
  const Tensor y = run1(make_node("Expand", {x, shape}), 13, {x, shape});
  EXPECT_EQ(y.shape(), (Shape{2, 3, 2}));
  expect_floats_near(y, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  const Tensor bad = i64({2}, {2, 1});
  expect_infer_error(make_node("Expand", {x, bad}, 1, "bad_expand"), 13, {x, bad},
                     "cannot broadcast");
}

TEST(Range, IntegerFloatAndNegativeDelta) {
  const auto range = [](const Tensor& s, const Tensor& l, const Tensor& d) {
    return run1(make_node("Range", {s, l, d}), 11, {s, l, d});
  };
  EXPECT_EQ(values<int64_t>(range(i64({}, {0}), i64({}, {10}), i64({}, {3}))),
            (std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(values<int32_t>(range(i32({}, {5}), i32({}, {1}), i32({}, {-2}))),
            (std::vector<int32_t>{5, 3}));
  expect_floats_near(range(f32({}, {1}), f32({}, {2}), f32({}, {0.25f})), {1, 1.25f, 1.5f, 1.75f});
  EXPECT_EQ(range(i64({}, {3}), i64({}, {1}), i64({}, {1})).numel(), 0);
}

// int64 inputs at the ends of the range: limit - start and the count are exact (128-bit), and
// each element start + i * delta is right even where i * delta alone overflows. Expected values
// are ONNX Runtime 1.32's for the same inputs.
TEST(Range, ExactAtInt64Extremes) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const auto range = [](int64_t s, int64_t l, int64_t d) {
    const std::vector<Tensor> in = {i64({}, {s}), i64({}, {l}), i64({}, {d})};
    return values<int64_t>(run1(make_node("Range", in), 11, in));
  };
  EXPECT_EQ(range(kMax, kMin, kMin), (std::vector<int64_t>{kMax, -1}));
  EXPECT_EQ(range(kMin, kMax, int64_t{1} << 62),
            (std::vector<int64_t>{kMin, -(int64_t{1} << 62), 0, int64_t{1} << 62}));
  EXPECT_EQ(range(kMin, kMax, kMax), (std::vector<int64_t>{kMin, -1, kMax - 1}));
}

// Counts that are not finite, do not fit in int64, or whose bytes overflow are refused naming
// the node and the inputs (ONNX Runtime refuses each of these at run time).
TEST(Range, AbsurdCountsNameTheNodeAndInputs) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const auto expect = [](const std::vector<Tensor>& in, const std::string& fragment) {
    expect_infer_error(make_node("Range", in, 1, "rng"), 11, in, fragment);
    expect_infer_error(make_node("Range", in, 1, "rng"), 11, in, "inputs 'start' ");
  };
  expect({i64({}, {kMin}), i64({}, {kMax}), i64({}, {1})}, "does not fit in int64");
  expect({i64({}, {kMin}), i64({}, {kMax}), i64({}, {3})},
         "= 6148914691236517205 of inputs 'start' -9223372036854775808, 'limit' "
         "9223372036854775807, 'delta' 3 gives a byte size that overflows int64");
  expect({f32({}, {0}), f32({}, {10}), f32({}, {std::nanf("")})}, "is not finite");
  expect({f32({}, {0}), f32({}, {std::numeric_limits<float>::infinity()}), f32({}, {1})},
         "is not finite");
  expect({f32({}, {0}), f32({}, {1e30f}), f32({}, {1e-30f})}, "does not fit in int64");
}

}  // namespace
}  // namespace tessera::test
