// MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool against hand-worked values.
#include <gtest/gtest.h>

#include "nn_test_util.hpp"

namespace tessera::testing {
namespace {

// x[r][c] = r * cols + c + 1.
Tensor ramp(int64_t rows, int64_t cols, float sign = 1.0f) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = sign * static_cast<float>(i + 1);
  return f32({1, 1, rows, cols}, v);
}

Node pool(const std::string& op, std::vector<int64_t> kernel, std::vector<int64_t> strides = {}) {
  Node node = make_node(op, 1);
  node.attrs.set("kernel_shape", kernel);
  if (!strides.empty()) node.attrs.set("strides", strides);
  return node;
}

TEST(MaxPool, Kernel2Stride2) {
  expect_near(run(pool("MaxPool", {2, 2}, {2, 2}), 12, {ramp(4, 4)})[0], {1, 1, 2, 2},
              {6, 8, 14, 16});
}

TEST(MaxPool, CeilModeKeepsPartialWindows) {
  // 5x5, kernel 2 stride 2: floor gives 2x2, ceil 3x3 with the last windows holding row/col 4.
  Node node = pool("MaxPool", {2, 2}, {2, 2});
  expect_near(run(node, 12, {ramp(5, 5)})[0], {1, 1, 2, 2}, {7, 9, 17, 19});
  node.attrs.set("ceil_mode", int64_t{1});
  expect_near(run(node, 12, {ramp(5, 5)})[0], {1, 1, 3, 3}, {7, 9, 10, 17, 19, 20, 22, 24, 25});
}

TEST(MaxPool, CeilModeDropsWindowStartingInEndPadding) {
  // in 2, kernel 2, stride 2, end pad 1: ceil((2+1-2)/2)+1 = 2, but the second window would
  // start at 2, past the input, so only 1 remains.
  Node node = pool("MaxPool", {2, 2}, {2, 2});
  node.attrs.set("pads", std::vector<int64_t>{0, 0, 1, 1});
  node.attrs.set("ceil_mode", int64_t{1});
  expect_near(run(node, 12, {ramp(2, 2)})[0], {1, 1, 1, 1}, {4});
}

TEST(MaxPool, PaddingIsNotAValue) {
  // All inputs negative: padded positions must not win as zeros. Kernel 2, stride 1, pads 1:
  // the window at (i,j) covers rows i-1..i, cols j-1..j; its max is the top-left valid element.
  Node node = pool("MaxPool", {2, 2});
  node.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  std::vector<float> expected;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      const int r = std::min(std::max(i - 1, 0), 2), c = std::min(std::max(j - 1, 0), 2);
      expected.push_back(-static_cast<float>(3 * r + c + 1));
    }
  }
  expect_near(run(node, 12, {ramp(3, 3, -1.0f)})[0], {1, 1, 4, 4}, expected);
}

TEST(MaxPool, Dilation2) {
  // The dilated 2x2 window at (i,j) holds x[i+2][j+2] as its maximum: 4(i+2) + (j+2) + 1.
  Node node = pool("MaxPool", {2, 2});
  node.attrs.set("dilations", std::vector<int64_t>{2, 2});
  expect_near(run(node, 12, {ramp(4, 4)})[0], {1, 1, 2, 2}, {11, 12, 15, 16});
}

TEST(MaxPool, AutoPadSameLower) {
  // 3x3, kernel 2, stride 1: one pad at the beginning; window (i,j) ends at (i,j).
  Node node = pool("MaxPool", {2, 2});
  node.attrs.set("auto_pad", std::string("SAME_LOWER"));
  expect_near(run(node, 12, {ramp(3, 3)})[0], {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST(MaxPool, IndicesRowAndColumnMajor) {
  // Channel 0 [[1,4],[3,2]]: max 4 at (0,1): row-major 1, column-major 0 + 1*2 = 2.
  // Channel 1 [[5,6],[8,7]]: max 8 at (1,0): row-major 4 + 2 = 6, column-major 4 + 1 = 5.
  const Tensor x = f32({1, 2, 2, 2}, {1, 4, 3, 2, 5, 6, 8, 7});
  Node node = make_node("MaxPool", 1, 2);
  node.attrs.set("kernel_shape", std::vector<int64_t>{2, 2});
  auto y = run(node, 12, {x});
  expect_near(y[0], {1, 2, 1, 1}, {4, 8});
  ASSERT_EQ(y[1].dtype(), DType::kInt64);
  EXPECT_EQ(y[1].to_int64_vector(), (std::vector<int64_t>{1, 6}));
  node.attrs.set("storage_order", int64_t{1});
  EXPECT_EQ(run(node, 12, {x})[1].to_int64_vector(), (std::vector<int64_t>{2, 5}));
}

TEST(MaxPool, BadAttributesNameTheNode) {
  Node node = make_node("MaxPool", 1, 1, "pool_bad");
  expect_error(node, 12, {ramp(3, 3)}, "kernel_shape");
  node.attrs.set("kernel_shape", std::vector<int64_t>{2, 2});
  node.attrs.set("pads", std::vector<int64_t>{1, 1});
  expect_error(node, 12, {ramp(3, 3)}, "pads");
  Node order = pool("MaxPool", {2, 2});
  order.name = "pool_order";
  order.attrs.set("storage_order", int64_t{2});
  expect_error(order, 12, {ramp(3, 3)}, "storage_order");
  Node big = pool("MaxPool", {4, 4});
  big.name = "pool_big";
  expect_error(big, 12, {ramp(3, 3)}, "larger than the padded input");
}

TEST(AveragePool, CountIncludePad) {
  // 3x3 kernel, pads 1 over 1..9. Corner (0,0) sees 1,2,4,5 (sum 12); edge (0,1) sees
  // 1..6 (sum 21); the centre sees all 45.
  Node node = pool("AveragePool", {3, 3});
  node.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  auto excl = run(node, 11, {ramp(3, 3)})[0];
  expect_near(
      excl, {1, 1, 3, 3},
      {12.f / 4, 21.f / 6, 16.f / 4, 27.f / 6, 45.f / 9, 33.f / 6, 24.f / 4, 39.f / 6, 28.f / 4});
  node.attrs.set("count_include_pad", int64_t{1});
  auto incl = run(node, 11, {ramp(3, 3)})[0];
  expect_near(
      incl, {1, 1, 3, 3},
      {12.f / 9, 21.f / 9, 16.f / 9, 27.f / 9, 45.f / 9, 33.f / 9, 24.f / 9, 39.f / 9, 28.f / 9});
}

TEST(AveragePool, CeilModePartialWindows) {
  // 5x5, kernel 2 stride 2, ceil: last column windows hold one column, the corner one element.
  Node node = pool("AveragePool", {2, 2}, {2, 2});
  node.attrs.set("ceil_mode", int64_t{1});
  const std::vector<float> expected = {
      (1 + 2 + 6 + 7) / 4.f,     (3 + 4 + 8 + 9) / 4.f,     (5 + 10) / 2.f,
      (11 + 12 + 16 + 17) / 4.f, (13 + 14 + 18 + 19) / 4.f, (15 + 20) / 2.f,
      (21 + 22) / 2.f,           (23 + 24) / 2.f,           25.f};
  expect_near(run(node, 11, {ramp(5, 5)})[0], {1, 1, 3, 3}, expected);
  // No pads: count_include_pad changes nothing, the ceil overhang is never counted.
  node.attrs.set("count_include_pad", int64_t{1});
  expect_near(run(node, 11, {ramp(5, 5)})[0], {1, 1, 3, 3}, expected);
}

TEST(AveragePool, CeilModeWithPadsCountsPadsButNotOverhang) {
  // 4x4 (1..16), kernel 3, stride 2, pads 1: out = ceil((4+2-3)/2)+1 = 3. Window 2 covers
  // positions 3, 4 (end pad), 5 (overhang). Corner (2,2): x[3][3] = 16 over 2x2 counted cells
  // with count_include_pad, over 1 without. Corner (0,0): 1+2+5+6 over 9 or 4.
  Node node = pool("AveragePool", {3, 3}, {2, 2});
  node.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  node.attrs.set("ceil_mode", int64_t{1});
  node.attrs.set("count_include_pad", int64_t{1});
  auto y = run(node, 11, {ramp(4, 4)})[0];
  ASSERT_EQ(y.shape(), (Shape{1, 1, 3, 3}));
  EXPECT_NEAR(values(y)[0], 14.f / 9, 1e-5);
  EXPECT_NEAR(values(y)[8], 16.f / 4, 1e-5);
  node.attrs.set("count_include_pad", int64_t{0});
  y = run(node, 11, {ramp(4, 4)})[0];
  EXPECT_NEAR(values(y)[0], 14.f / 4, 1e-5);
  EXPECT_NEAR(values(y)[8], 16.f, 1e-5);
}

TEST(AveragePool, CeilModeNeedsOpset10) {
  Node node = pool("AveragePool", {2, 2}, {2, 2});
  node.name = "avg_old";
  node.attrs.set("ceil_mode", int64_t{1});
  expect_error<UnsupportedError>(node, 7, {ramp(5, 5)}, "ceil_mode");
}

TEST(GlobalPool, AverageAndMax) {
  const Tensor x = f32({1, 2, 2, 2}, {1, 2, 3, 4, -5, -6, -7, -8});
  expect_near(run(make_node("GlobalAveragePool", 1), 11, {x})[0], {1, 2, 1, 1}, {2.5f, -6.5f});
  expect_near(run(make_node("GlobalMaxPool", 1), 11, {x})[0], {1, 2, 1, 1}, {4, -5});
  const Tensor x1d = f32({2, 1, 3}, {1, 2, 6, 0, -3, 3});
  expect_near(run(make_node("GlobalAveragePool", 1), 11, {x1d})[0], {2, 1, 1}, {3, 0});
}

TEST(GlobalPool, RejectsRank2) {
  expect_error(make_node("GlobalMaxPool", 1, 1, "gmp"), 11, {f32({2, 2}, {1, 2, 3, 4})}, "rank");
}

}  // namespace
}  // namespace tessera::testing
