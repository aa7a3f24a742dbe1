// Tensor-manipulation ops (Reshape, Flatten, Transpose, Concat, Split, Slice, Gather, Squeeze,
// Unsqueeze, Shape) against hand-computed values, plus their bad-input errors.
#include <limits>

#include "op_test_util.hpp"

namespace tessera::test {
namespace {

std::vector<float> iota_f(int n) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(static_cast<float>(i));
  return v;
}

Tensor reshape(const Tensor& x, const std::vector<int64_t>& shape, int64_t opset = 13,
               int64_t allowzero = -1) {
  const Tensor s = i64({static_cast<int64_t>(shape.size())}, shape);
  Node node = make_node("Reshape", {x, s});
  if (allowzero >= 0) node.attrs.set("allowzero", allowzero);
  return run1(node, opset, {x, s});
}

TEST(Reshape, ZeroCopiesDimAndMinusOneIsInferred) {
  const Tensor x = f32({2, 3, 4}, iota_f(24));
  const Tensor a = reshape(x, {0, -1});
  EXPECT_EQ(a.shape(), (Shape{2, 12}));
  expect_floats_near(a, iota_f(24));
  EXPECT_EQ(reshape(x, {-1, 0, 2}).shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(reshape(x, {24}).shape(), (Shape{24}));
}

TEST(Reshape, AllowZeroFromOpset14) {
  const Tensor empty = f32({2, 0}, {});
  // allowzero=1: the 0 is a real empty dim.
  EXPECT_EQ(reshape(empty, {0, 5}, 14, 1).shape(), (Shape{0, 5}));
  // allowzero=0: the 0 copies the 2, giving 10 elements for 0: an error.
  const Tensor s = i64({2}, {0, 5});
  expect_infer_error(make_node("Reshape", {empty, s}, 1, "copy_zero"), 14, {empty, s},
                     "cannot reshape");
  Node both = make_node("Reshape", {empty, s}, 1, "zero_and_minus_one");
  both.attrs.set("allowzero", int64_t{1});
  const Tensor s2 = i64({2}, {0, -1});
  expect_infer_error(both, 14, {empty, s2}, "both 0 and -1");
}

TEST(Reshape, AttributeFormBeforeOpset5) {
  Node node = make_node("Reshape", {Tensor()});
  node.attrs.set("shape", std::vector<int64_t>{3, -1});
  EXPECT_EQ(run1(node, 1, {f32({2, 3}, iota_f(6))}).shape(), (Shape{3, 2}));
}

TEST(Reshape, MismatchingSizeNamesTheNode) {
  const Tensor x = f32({2, 3}, iota_f(6));
  const Tensor s = i64({2}, {4, 2});
  expect_infer_error(make_node("Reshape", {x, s}, 1, "bad_reshape"), 13, {x, s},
                     "cannot reshape input [2, 3] (6 elements) to [4, 2] (8 elements)");
  const Tensor two = i64({2}, {-1, -1});
  expect_infer_error(make_node("Reshape", {x, two}, 1, "two_minus_ones"), 13, {x, two},
                     "more than one -1");
}

TEST(Flatten, Axes) {
  const Tensor x = f32({2, 3, 4}, iota_f(24));
  const auto flat = [&](int64_t axis) {
    Node node = make_node("Flatten", {x});
    node.attrs.set("axis", axis);
    return run1(node, 13, {x}).shape();
  };
  EXPECT_EQ(run1(make_node("Flatten", {x}), 13, {x}).shape(), (Shape{2, 12}));
  EXPECT_EQ(flat(0), (Shape{1, 24}));
  EXPECT_EQ(flat(-1), (Shape{6, 4}));
  EXPECT_EQ(flat(3), (Shape{24, 1}));
  Node bad = make_node("Flatten", {x}, 1, "bad_flatten");
  bad.attrs.set("axis", int64_t{4});
  expect_infer_error(bad, 13, {x}, "out of range");
}

TEST(Transpose, DefaultReversesAndExplicitPerm) {
  const Tensor m = f32({2, 3}, iota_f(6));
  const Tensor t = run1(make_node("Transpose", {m}), 13, {m});
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  expect_floats_near(t, {0, 3, 1, 4, 2, 5});

  // out[j, k, i] = in[i, j, k] = 12i + 4j + k.
  const Tensor x = f32({2, 3, 4}, iota_f(24));
  Node node = make_node("Transpose", {x});
  node.attrs.set("perm", std::vector<int64_t>{1, 2, 0});
  const Tensor y = run1(node, 13, {x});
  EXPECT_EQ(y.shape(), (Shape{3, 4, 2}));
  expect_floats_near(
      y, {0, 12, 1, 13, 2, 14, 3, 15, 4, 16, 5, 17, 6, 18, 7, 19, 8, 20, 9, 21, 10, 22, 11, 23});

  Node bad = make_node("Transpose", {m}, 1, "bad_perm");
  bad.attrs.set("perm", std::vector<int64_t>{0, 0});
  expect_infer_error(bad, 13, {m}, "not a permutation");
}

TEST(Transpose, Int64CopiesByElementSize) {
  const Tensor m = i64({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(values<int64_t>(run1(make_node("Transpose", {m}), 13, {m})),
            (std::vector<int64_t>{1, 3, 2, 4}));
}

TEST(Concat, NegativeAxisAndErrors) {
  const Tensor a = f32({2, 1}, {1, 2});
  const Tensor b = f32({2, 2}, {3, 4, 5, 6});
  Node node = make_node("Concat", {a, b}, 1, "cat");
  node.attrs.set("axis", int64_t{-1});
  const Tensor y = run1(node, 13, {a, b});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  expect_floats_near(y, {1, 3, 4, 2, 5, 6});

  const Tensor p = i64({1}, {1});
  const Tensor q = i64({2}, {3, 224});
  Node shapes = make_node("Concat", {p, q});
  shapes.attrs.set("axis", int64_t{0});
  EXPECT_EQ(values<int64_t>(run1(shapes, 13, {p, q})), (std::vector<int64_t>{1, 3, 224}));

  node.attrs.set("axis", int64_t{0});
  expect_infer_error(node, 13, {a, b}, "incompatible");
  node.attrs.set("axis", int64_t{2});
  expect_infer_error(node, 13, {a, b}, "out of range");
}

TEST(Split, AttributeInputNumOutputsAndEqual) {
  const Tensor x = f32({5}, {1, 2, 3, 4, 5});
  Node attr = make_node("Split", {x}, 2);
  attr.attrs.set("split", std::vector<int64_t>{2, 3});
  std::vector<Tensor> outs = run(attr, 11, {x});
  expect_floats_near(outs[0], {1, 2});
  expect_floats_near(outs[1], {3, 4, 5});

  const Tensor sizes = i64({2}, {4, 1});
  outs = run(make_node("Split", {x, sizes}, 2), 13, {x, sizes});
  expect_floats_near(outs[0], {1, 2, 3, 4});
  expect_floats_near(outs[1], {5});

  // num_outputs=3 on 7: chunks of ceil(7/3) = 3, the last one 1.
  const Tensor seven = f32({7}, iota_f(7));
  Node num = make_node("Split", {seven}, 3);
  num.attrs.set("num_outputs", int64_t{3});
  outs = run(num, 18, {seven});
  expect_floats_near(outs[0], {0, 1, 2});
  expect_floats_near(outs[1], {3, 4, 5});
  expect_floats_near(outs[2], {6});

  // Equal parts along axis 1 of [2, 4].
  const Tensor m = f32({2, 4}, iota_f(8));
  Node eq = make_node("Split", {m}, 2);
  eq.attrs.set("axis", int64_t{-1});
  outs = run(eq, 13, {m});
  expect_floats_near(outs[0], {0, 1, 4, 5});
  expect_floats_near(outs[1], {2, 3, 6, 7});

  expect_infer_error(make_node("Split", {x}, 2, "uneven_split"), 13, {x}, "does not split evenly");
  const Tensor wrong = i64({2}, {2, 2});
  expect_infer_error(make_node("Split", {x, wrong}, 2, "bad_sizes"), 13, {x, wrong},
                     "does not add up");
}

Tensor slice(const Tensor& x, std::vector<int64_t> starts, std::vector<int64_t> ends,
             std::vector<int64_t> axes = {}, std::vector<int64_t> steps = {}) {
  const int64_t n = static_cast<int64_t>(starts.size());
  std::vector<Tensor> in = {x, i64({n}, starts), i64({n}, ends)};
  if (!axes.empty() || !steps.empty()) in.push_back(axes.empty() ? Tensor() : i64({n}, axes));
  if (!steps.empty()) in.push_back(i64({n}, steps));
  return run1(make_node("Slice", in), 13, in);
}

TEST(Slice, NegativeStepsAndClamping) {
  const Tensor x = f32({10}, iota_f(10));
  // Full reverse: start -1 is 9, end -100 clamps to -1 (before the first element).
  expect_floats_near(slice(x, {-1}, {-100}, {0}, {-1}), {9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  expect_floats_near(slice(x, {8}, {0}, {}, {-3}), {8, 5, 2});
  // INT64_MAX end, as exporters write for "to the end".
  expect_floats_near(slice(x, {7}, {std::numeric_limits<int64_t>::max()}), {7, 8, 9});
  EXPECT_EQ(slice(x, {5}, {2}).numel(), 0);

  // [3, 4]: columns 1, 3 (step 2, end clamped) and rows 2, 1 (step -1, end 0 exclusive).
  const Tensor m = f32({3, 4}, iota_f(12));
  const Tensor y = slice(m, {1, 2}, {1000, 0}, {-1, 0}, {2, -1});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  expect_floats_near(y, {9, 11, 5, 7});
}

// Steps of INT64_MIN and INT64_MAX: the length is computed without negating or adding to the
// step, so they give one element, as ONNX Runtime 1.32 and numpy do (values taken from ONNX
// Runtime on these inputs).
TEST(Slice, ExtremeStepsGiveOneElementLikeOnnxRuntime) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const Tensor x = f32({10}, iota_f(10));
  expect_floats_near(slice(x, {9}, {kMin}, {0}, {kMin}), {9});
  expect_floats_near(slice(x, {0}, {kMax}, {0}, {kMax}), {0});
  const Tensor m = f32({3, 4}, iota_f(12));
  const Tensor last_row = slice(m, {-1}, {kMin}, {0}, {kMin});
  EXPECT_EQ(last_row.shape(), (Shape{1, 4}));
  expect_floats_near(last_row, {8, 9, 10, 11});
  const Tensor corner = slice(m, {0, 3}, {kMax, kMin}, {0, 1}, {kMax, kMin});
  EXPECT_EQ(corner.shape(), (Shape{1, 1}));
  expect_floats_near(corner, {3});
}

TEST(Slice, AttributeFormBeforeOpset10) {
  const Tensor m = f32({3, 4}, iota_f(12));
  Node node = make_node("Slice", {m});
  node.attrs.set("starts", std::vector<int64_t>{1});
  node.attrs.set("ends", std::vector<int64_t>{3});
  node.attrs.set("axes", std::vector<int64_t>{1});
  expect_floats_near(run1(node, 9, {m}), {1, 2, 5, 6, 9, 10});
}

TEST(Slice, ZeroStepIsAnError) {
  const Tensor x = f32({4}, iota_f(4));
  const std::vector<Tensor> in = {x, i64({1}, {0}), i64({1}, {4}), i64({1}, {0}), i64({1}, {0})};
  expect_infer_error(make_node("Slice", in, 1, "zero_step"), 13, in, "contains 0");
}

TEST(Gather, NegativeIndicesAndAxes) {
  const Tensor data = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor idx = i64({2}, {-1, 0});
  const Tensor rows = run1(make_node("Gather", {data, idx}), 13, {data, idx});
  EXPECT_EQ(rows.shape(), (Shape{2, 2}));
  expect_floats_near(rows, {5, 6, 1, 2});

  // axis 1 with int32 indices of shape [2, 1]: out[i, j, 0] = data[i, idx[j]].
  const Tensor idx32 = i32({2, 1}, {1, 0});
  Node node = make_node("Gather", {data, idx32});
  node.attrs.set("axis", int64_t{1});
  const Tensor cols = run1(node, 13, {data, idx32});
  EXPECT_EQ(cols.shape(), (Shape{3, 2, 1}));
  expect_floats_near(cols, {2, 1, 4, 3, 6, 5});
}

TEST(Gather, ScalarIndexOnShapeTensor) {
  const Tensor shape = i64({4}, {1, 3, 224, 224});
  const Tensor one = i64({}, {1});
  const Tensor y = run1(make_node("Gather", {shape, one}), 13, {shape, one});
  EXPECT_EQ(y.shape(), Shape{});
  EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{3}));
}

TEST(Gather, OutOfRangeIndexNamesTheNode) {
  const Tensor data = f32({3}, {1, 2, 3});
  const Tensor idx = i64({1}, {3});
  try {
    run1(make_node("Gather", {data, idx}, 1, "bad_gather"), 13, {data, idx});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'bad_gather'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("index 3 is out of range"), std::string::npos);
  }
}

TEST(Unsqueeze, InputAndAttributeForms) {
  const Tensor x = f32({3}, {1, 2, 3});
  const Tensor axes = i64({2}, {-1, 0});  // -1 indexes the rank-3 output
  const Tensor y = run1(make_node("Unsqueeze", {x, axes}), 13, {x, axes});
  EXPECT_EQ(y.shape(), (Shape{1, 3, 1}));
  expect_floats_near(y, {1, 2, 3});
  Node attr = make_node("Unsqueeze", {x});
  attr.attrs.set("axes", std::vector<int64_t>{1});
  EXPECT_EQ(run1(attr, 11, {f32({2, 3}, iota_f(6))}).shape(), (Shape{2, 1, 3}));
  const Tensor bad = i64({1}, {3});
  expect_infer_error(make_node("Unsqueeze", {x, bad}, 1, "bad_unsqueeze"), 13, {x, bad},
                     "out of range");
}

TEST(Squeeze, AxesNegativeAllAndErrors) {
  const Tensor x = f32({1, 3, 1}, {1, 2, 3});
  const Tensor last = i64({1}, {-1});
  EXPECT_EQ(run1(make_node("Squeeze", {x, last}), 13, {x, last}).shape(), (Shape{1, 3}));
  EXPECT_EQ(run1(make_node("Squeeze", {x}), 13, {x}).shape(), (Shape{3}));
  Node attr = make_node("Squeeze", {x});
  attr.attrs.set("axes", std::vector<int64_t>{0});
  EXPECT_EQ(run1(attr, 11, {x}).shape(), (Shape{3, 1}));
  const Tensor middle = i64({1}, {1});
  expect_infer_error(make_node("Squeeze", {x, middle}, 1, "bad_squeeze"), 13, {x, middle},
                     "its size is 3");
  const Tensor far = i64({1}, {-4});
  expect_infer_error(make_node("Squeeze", {x, far}, 1, "far_squeeze"), 13, {x, far},
                     "out of range [-3, 2]");
}

TEST(Shape, WholeAndStartEndFromOpset15) {
  const Tensor x = Tensor(DType::kUInt8, {2, 3, 4});
  EXPECT_EQ(values<int64_t>(run1(make_node("Shape", {x}), 13, {x})),
            (std::vector<int64_t>{2, 3, 4}));
  Node node = make_node("Shape", {x});
  node.attrs.set("start", int64_t{1});
  EXPECT_EQ(values<int64_t>(run1(node, 15, {x})), (std::vector<int64_t>{3, 4}));
  node.attrs.set("start", int64_t{-2});
  node.attrs.set("end", int64_t{-1});
  EXPECT_EQ(values<int64_t>(run1(node, 15, {x})), (std::vector<int64_t>{3}));
  node.attrs.set("start", int64_t{0});
  node.attrs.set("end", int64_t{100});  // clamped to the rank
  EXPECT_EQ(values<int64_t>(run1(node, 15, {x})), (std::vector<int64_t>{2, 3, 4}));
}

}  // namespace
}  // namespace tessera::test
