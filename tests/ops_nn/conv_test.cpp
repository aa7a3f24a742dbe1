// Conv reference kernel against hand-worked sums and an independent direct 2-D formula.
#include <gtest/gtest.h>

#include "nn_test_util.hpp"

namespace tessera::testing {
namespace {

const Tensor kX3x3 = f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});

TEST(Conv, Plain2x2KernelWithBias) {
  // out(i,j) = sum_{a,b} x[i+a][j+b] * w[a][b] + 1, w = [[1,2],[3,4]]:
  // (0,0) = 1*1 + 2*2 + 4*3 + 5*4 = 37, (0,1) = 47, (1,0) = 67, (1,1) = 77.
  Node node = make_node("Conv", 3);
  auto y = run(node, 11, {kX3x3, f32({1, 1, 2, 2}, {1, 2, 3, 4}), f32({1}, {1})});
  expect_near(y[0], {1, 1, 2, 2}, {38, 48, 68, 78});
}

TEST(Conv, Stride2Pads1Ones3x3) {
  // Windows at rows/cols {-1..1} and {1..3}: sums of the 2x2 corners of the input.
  Node node = make_node("Conv", 2);
  node.attrs.set("strides", std::vector<int64_t>{2, 2});
  node.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  node.attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
  auto y = run(node, 11, {kX3x3, f32({1, 1, 3, 3}, std::vector<float>(9, 1.0f))});
  expect_near(y[0], {1, 1, 2, 2}, {1 + 2 + 4 + 5, 2 + 3 + 5 + 6, 4 + 5 + 7 + 8, 5 + 6 + 8 + 9});
}

TEST(Conv, Dilation2) {
  // x[r][c] = 4r + c; w = [[1,2],[3,4]] dilated by 2 touches x[i][j], x[i][j+2], x[i+2][j],
  // x[i+2][j+2]: out = 10 * (4i + j) + (2*2 + 3*8 + 4*10) = 10 * (4i + j) + 68.
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i);
  Node node = make_node("Conv", 2);
  node.attrs.set("dilations", std::vector<int64_t>{2, 2});
  auto y = run(node, 11, {f32({1, 1, 4, 4}, x), f32({1, 1, 2, 2}, {1, 2, 3, 4})});
  expect_near(y[0], {1, 1, 2, 2}, {68, 78, 108, 118});
}

TEST(Conv, Depthwise) {
  // group = C = 2: channel 0 (1..4) * ones = 10, channel 1 (5..8) * [[1,0],[0,1]] = 5 + 8.
  Node node = make_node("Conv", 2);
  node.attrs.set("group", int64_t{2});
  auto y = run(
      node, 11,
      {f32({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), f32({2, 1, 2, 2}, {1, 1, 1, 1, 1, 0, 0, 1})});
  expect_near(y[0], {1, 2, 1, 1}, {10, 13});
}

TEST(Conv, TwoGroupsMixOnlyTheirOwnChannels) {
  // Output 0 sees channels 0,1 (1*1 + 2*10); output 1 sees channels 2,3 (3*100 + 4*1000).
  Node node = make_node("Conv", 2);
  node.attrs.set("group", int64_t{2});
  auto y = run(node, 11, {f32({1, 4, 1, 1}, {1, 2, 3, 4}), f32({2, 2, 1, 1}, {1, 10, 100, 1000})});
  expect_near(y[0], {1, 2, 1, 1}, {21, 4300});
}

TEST(Conv, AutoPadSameUpperAndLower) {
  // 2x2 ones over 3x3: total pad 1 per dim, at the end (UPPER) or the beginning (LOWER).
  const Tensor w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  Node upper = make_node("Conv", 2);
  upper.attrs.set("auto_pad", std::string("SAME_UPPER"));
  expect_near(run(upper, 11, {kX3x3, w})[0], {1, 1, 3, 3}, {12, 16, 9, 24, 28, 15, 15, 17, 9});
  Node lower = make_node("Conv", 2);
  lower.attrs.set("auto_pad", std::string("SAME_LOWER"));
  expect_near(run(lower, 11, {kX3x3, w})[0], {1, 1, 3, 3}, {1, 3, 5, 5, 12, 16, 11, 24, 28});
}

TEST(Conv, AutoPadShapes) {
  // SAME: ceil(in / stride); VALID: floor((in - dilated kernel) / stride) + 1.
  const Tensor x = f32({1, 1, 5, 7}, std::vector<float>(35, 0.0f));
  const Tensor w = f32({2, 1, 3, 3}, std::vector<float>(18, 0.0f));
  Node same = make_node("Conv", 2);
  same.attrs.set("auto_pad", std::string("SAME_UPPER"));
  same.attrs.set("strides", std::vector<int64_t>{2, 2});
  EXPECT_EQ(infer_shape(same, 11, {x, w}), (Shape{1, 2, 3, 4}));
  Node valid = make_node("Conv", 2);
  valid.attrs.set("auto_pad", std::string("VALID"));
  valid.attrs.set("strides", std::vector<int64_t>{2, 2});
  EXPECT_EQ(infer_shape(valid, 11, {x, w}), (Shape{1, 2, 2, 3}));
}

TEST(Conv, OneDAndThreeD) {
  Node node = make_node("Conv", 2);
  // 1-D: [1..5] * [1,2,3]: 1+4+9, 2+6+12, 3+8+15.
  expect_near(run(node, 11, {f32({1, 1, 5}, {1, 2, 3, 4, 5}), f32({1, 1, 3}, {1, 2, 3})})[0],
              {1, 1, 3}, {14, 20, 26});
  // 3-D: all-ones 2x2x2 kernel over 1..8 sums everything.
  expect_near(run(node, 11,
                  {f32({1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
                   f32({1, 1, 2, 2, 2}, std::vector<float>(8, 1.0f))})[0],
              {1, 1, 1, 1, 1}, {36});
}

// Direct 2-D convolution written independently of the kernel (NCHW, explicit pads).
std::vector<float> direct_conv2d(const std::vector<float>& x, int n, int c, int h, int w,
                                 const std::vector<float>& wt, int m, int kh, int kw, int group,
                                 int sh, int sw, int dh, int dw, int ph0, int pw0, int ph1, int pw1,
                                 const std::vector<float>& bias, int oh, int ow) {
  std::vector<float> y(static_cast<size_t>(n * m * oh * ow));
  const int cg = c / group, mg = m / group;
  for (int b = 0; b < n; ++b)
    for (int oc = 0; oc < m; ++oc)
      for (int i = 0; i < oh; ++i)
        for (int j = 0; j < ow; ++j) {
          double s = bias.empty() ? 0.0 : bias[oc];
          for (int ic = 0; ic < cg; ++ic)
            for (int a = 0; a < kh; ++a)
              for (int e = 0; e < kw; ++e) {
                const int r = i * sh - ph0 + a * dh, q = j * sw - pw0 + e * dw;
                if (r < 0 || r >= h || q < 0 || q >= w) continue;
                const int chan = (oc / mg) * cg + ic;
                s += x[((b * c + chan) * h + r) * w + q] * wt[((oc * cg + ic) * kh + a) * kw + e];
              }
          y[((b * m + oc) * oh + i) * ow + j] = static_cast<float>(s);
        }
  (void)ph1;
  (void)pw1;
  return y;
}

TEST(Conv, MatchesDirectFormulaOnMixedAttributes) {
  // N=2, C=4, 7x6 input, M=6, group 2, 3x2 kernel, strides (2,1), dilations (1,2),
  // pads (1,0,2,1): output rows (7+3-3)/2+1 = 4, cols (6+1-3)/1+1 = 5.
  const int n = 2, c = 4, h = 7, w = 6, m = 6, kh = 3, kw = 2, g = 2;
  std::vector<float> x(n * c * h * w), wt(m * (c / g) * kh * kw), bias(m);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 13) - 6.0f;
  for (size_t i = 0; i < wt.size(); ++i) wt[i] = static_cast<float>((i * 5) % 11) * 0.25f - 1.0f;
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<float>(i) - 2.5f;
  Node node = make_node("Conv", 3);
  node.attrs.set("group", int64_t{g});
  node.attrs.set("strides", std::vector<int64_t>{2, 1});
  node.attrs.set("dilations", std::vector<int64_t>{1, 2});
  node.attrs.set("pads", std::vector<int64_t>{1, 0, 2, 1});
  node.attrs.set("kernel_shape", std::vector<int64_t>{kh, kw});
  auto y = run(node, 11, {f32({n, c, h, w}, x), f32({m, c / g, kh, kw}, wt), f32({m}, bias)});
  expect_near(y[0], {n, m, 4, 5},
              direct_conv2d(x, n, c, h, w, wt, m, kh, kw, g, 2, 1, 1, 2, 1, 0, 2, 1, bias, 4, 5),
              1e-4f);
}

TEST(Conv, BadInputsNameTheNode) {
  Node node = make_node("Conv", 2, 1, "conv_bad");
  // 3 input channels, weight expects 2.
  expect_error(node, 11, {f32({1, 3, 2, 2}, std::vector<float>(12, 0)), f32({1, 2, 1, 1}, {1, 1})},
               "channels");
  node.attrs.set("auto_pad", std::string("SAME"));
  expect_error(node, 11, {kX3x3, f32({1, 1, 1, 1}, {1})}, "auto_pad");
  // A group so large that weight dim 1 * group overflows int64 (a corrupted package found it
  // under UBSan): refused as a mismatch, no overflow.
  Node huge = make_node("Conv", 2, 1, "conv_huge_group");
  huge.attrs.set("group", int64_t{2666130979403333633});
  expect_error(huge, 11, {f32({1, 0, 2, 2}, {}), f32({3, 32, 1, 1}, std::vector<float>(96, 0))},
               "group = 2666130979403333633");
  Node ks = make_node("Conv", 2, 1, "conv_ks");
  ks.attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
  expect_error(ks, 11, {kX3x3, f32({1, 1, 2, 2}, {1, 1, 1, 1})}, "kernel_shape");
  Node st = make_node("Conv", 2, 1, "conv_st");
  st.attrs.set("strides", std::vector<int64_t>{0, 1});
  expect_error(st, 11, {kX3x3, f32({1, 1, 2, 2}, {1, 1, 1, 1})}, "strides");
  Node kind = make_node("Conv", 2, 1, "conv_kind");
  kind.attrs.set("group", 1.5f);  // wrong attribute kind: float instead of int
  expect_error(kind, 11, {kX3x3, f32({1, 1, 2, 2}, {1, 1, 1, 1})}, "group");
  Node bias = make_node("Conv", 3, 1, "conv_bias");
  expect_error(bias, 11, {kX3x3, f32({1, 1, 2, 2}, {1, 1, 1, 1}), f32({2}, {1, 1})}, "bias");
}

}  // namespace
}  // namespace tessera::testing
