// Hand-worked values for the cases of issue 16's neural-network ops that the ONNX backend node
// tests do not reach: InstanceNormalization (its node tests are opset 6, below what Tessera
// imports), GroupNormalization's opset-18 per-group parameters, LayerNormalization with
// broadcast Scale and without B, grouped ConvTranspose and the SAME_UPPER / SAME_LOWER pad split,
// DepthToSpace / SpaceToDepth on int64, Tile with a zero repeat, and Upsample at opset 7.
#include <gtest/gtest.h>

#include <cmath>

#include "nn_test_util.hpp"

namespace tessera::testing {
namespace {

TEST(InstanceNormalization, PerPlaneStatistics) {
  // Plane (n0,c0) = [0, 2]: mean 1, variance 1 -> [-1, 1]; (n0,c1) = [5, 5]: variance 0 -> 0.
  // With epsilon 0 the first plane is exact; scale [2, 3], B [0.5, -1].
  Node node = make_node("InstanceNormalization", 3);
  node.attrs.set("epsilon", 0.0f);
  const auto y =
      run(node, 22, {f32({1, 2, 2}, {0, 2, 5, 5}), f32({2}, {2, 3}), f32({2}, {0.5f, -1})});
  // 0 / sqrt(0) is NaN for the constant plane with epsilon 0, so check that plane with epsilon > 0.
  EXPECT_FLOAT_EQ(values(y[0])[0], -1.5f);
  EXPECT_FLOAT_EQ(values(y[0])[1], 2.5f);
  node.attrs.set("epsilon", 1e-5f);
  const auto z =
      run(node, 22, {f32({1, 2, 2}, {0, 2, 5, 5}), f32({2}, {2, 3}), f32({2}, {0.5f, -1})});
  const float n = 1.0f / std::sqrt(1.0f + 1e-5f);
  expect_near(z[0], {1, 2, 2}, {-2 * n + 0.5f, 2 * n + 0.5f, -1, -1});
}

TEST(GroupNormalization, Opset18ScalesPerGroup) {
  // Two groups of two channels, one position each: group 0 = [1, 3] (mean 2, var 1),
  // group 1 = [10, 14] (mean 12, var 4). Opset 18: scale/bias per group.
  Node node = make_node("GroupNormalization", 3);
  node.attrs.set("num_groups", int64_t{2});
  node.attrs.set("epsilon", 0.0f);
  const Tensor x = f32({1, 4, 1}, {1, 3, 10, 14});
  expect_near(run(node, 18, {x, f32({2}, {2, 10}), f32({2}, {0, 1})})[0], {1, 4, 1},
              {-2, 2, -9, 11});
  // Opset 21: per channel.
  expect_near(run(node, 21, {x, f32({4}, {1, 2, 3, 4}), f32({4}, {0, 0, 0, 1})})[0], {1, 4, 1},
              {-1, 2, -3, 5});
}

TEST(LayerNormalization, BroadcastScaleNoBiasAndStatistics) {
  // Rows [1, 3] and [2, 6]: means 2 and 4, variances 1 and 4, so normalized [-1, 1] twice.
  Node node = make_node("LayerNormalization", 2, 3);
  node.attrs.set("epsilon", 0.0f);
  std::vector<ops::OutputInfo> infos;
  const auto y = run(node, 17, {f32({2, 2}, {1, 3, 2, 6}), f32({1}, {3})}, &infos);
  expect_near(y[0], {2, 2}, {-3, 3, -3, 3});
  expect_near(y[1], {2, 1}, {2, 4});
  expect_near(y[2], {2, 1}, {1, 0.5f});
  // axis 0: one row of four values, mean 3, variance 3.5.
  node.attrs.set("axis", int64_t{0});
  const float inv = 1.0f / std::sqrt(3.5f);
  const auto z = run(node, 17, {f32({2, 2}, {1, 3, 2, 6}), f32({2, 2}, {1, 1, 1, 2})});
  expect_near(z[0], {2, 2}, {-2 * inv, 0, -1 * inv, 6 * inv});
  expect_near(z[1], {1, 1}, {3});
}

TEST(ConvTranspose, GroupedOneD) {
  // Group 2: channel 0 [1, 2] with kernel [1, 1] -> [1, 3, 2]; channel 1 [3, 4] with [1, -1]
  // -> [3, 1, -4]; bias [10, 20].
  Node node = make_node("ConvTranspose", 3);
  node.attrs.set("group", int64_t{2});
  expect_near(
      run(node, 11,
          {f32({1, 2, 2}, {1, 2, 3, 4}), f32({2, 1, 2}, {1, 1, 1, -1}), f32({2}, {10, 20})})[0],
      {1, 2, 3}, {11, 13, 12, 23, 21, 16});
}

TEST(ConvTranspose, SameUpperAndLowerSplitThePad) {
  // x [1, 2], kernel [1, 1, 1], stride 2: the full output is [1, 1, 3, 2, 2] (length 5); SAME
  // wants 2 * 2 = 4, so one position goes: SAME_UPPER drops the last, SAME_LOWER the first.
  Node node = make_node("ConvTranspose", 2);
  node.attrs.set("strides", std::vector<int64_t>{2});
  node.attrs.set("auto_pad", std::string("SAME_UPPER"));
  const Tensor x = f32({1, 1, 2}, {1, 2});
  const Tensor w = f32({1, 1, 3}, {1, 1, 1});
  expect_near(run(node, 11, {x, w})[0], {1, 1, 4}, {1, 1, 3, 2});
  node.attrs.set("auto_pad", std::string("SAME_LOWER"));
  expect_near(run(node, 11, {x, w})[0], {1, 1, 4}, {1, 3, 2, 2});
  // output_shape longer than the full output: the extra position gets only the bias (0 here).
  Node longer = make_node("ConvTranspose", 2);
  longer.attrs.set("strides", std::vector<int64_t>{2});
  longer.attrs.set("output_shape", std::vector<int64_t>{1, 1, 6});
  expect_near(run(longer, 11, {x, w})[0], {1, 1, 6}, {1, 1, 3, 2, 2, 0});
}

TEST(DepthToSpace, Int64RoundTripThroughSpaceToDepth) {
  // x[n, c, h, w] = c * 10 + h * 2 + w... with 4 channels, 1x1 spatial: DCR puts channel
  // (i*2 + j) at (i, j); CRD does the same with one output channel.
  const Tensor x = i64({1, 4, 1, 1}, {0, 1, 2, 3});
  Node d2s = make_node("DepthToSpace", 1);
  d2s.attrs.set("blocksize", int64_t{2});
  const auto y = run(d2s, 13, {x});
  ASSERT_EQ(y[0].shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{0, 1, 2, 3}));
  // Eight channels: DCR block (i, j) of output channel c is input channel (i*2+j)*2 + c; CRD's is
  // c*4 + i*2 + j.
  std::vector<int64_t> v(8);
  for (int64_t i = 0; i < 8; ++i) v[static_cast<size_t>(i)] = i;
  const Tensor x8 = i64({1, 8, 1, 1}, v);
  EXPECT_EQ(run(d2s, 13, {x8})[0].to_int64_vector(),
            (std::vector<int64_t>{0, 2, 4, 6, 1, 3, 5, 7}));
  d2s.attrs.set("mode", std::string("CRD"));
  EXPECT_EQ(run(d2s, 13, {x8})[0].to_int64_vector(), v);
  // Opset 1 has no mode: always DCR, whatever the attribute says.
  EXPECT_EQ(run(d2s, 1, {x8})[0].to_int64_vector(), (std::vector<int64_t>{0, 2, 4, 6, 1, 3, 5, 7}));
  // SpaceToDepth undoes DCR.
  Node s2d = make_node("SpaceToDepth", 1);
  s2d.attrs.set("blocksize", int64_t{2});
  d2s.attrs.set("mode", std::string("DCR"));
  EXPECT_EQ(run(s2d, 13, {run(d2s, 13, {x8})[0]})[0].to_int64_vector(), v);
}

TEST(Tile, ZeroRepeatAndInt64) {
  const Node node = make_node("Tile", 2);
  const auto y = run(node, 13, {i64({2}, {7, 8}), i64({1}, {3})});
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{7, 8, 7, 8, 7, 8}));
  const auto z = run(node, 13, {f32({1, 2}, {1, 2}), i64({2}, {0, 2})});
  EXPECT_EQ(z[0].shape(), (Shape{0, 4}));
}

TEST(Upsample, Opset7AttributeNearestAndLinear) {
  Node node = make_node("Upsample", 1);
  node.attrs.set("scales", std::vector<float>{1, 1, 1, 2});
  const Tensor x = f32({1, 1, 1, 2}, {1, 3});
  // Nearest, asymmetric, floor: coords 0, .5, 1, 1.5 -> 0, 0, 1, 1.
  expect_near(run(node, 7, {x})[0], {1, 1, 1, 4}, {1, 1, 3, 3});
  // Linear: coords 0, .5, 1, 1.5 (clamped to 1).
  node.attrs.set("mode", std::string("linear"));
  expect_near(run(node, 7, {x})[0], {1, 1, 1, 4}, {1, 2, 3, 3});
  // Opset 9: scales as input; non-integral 1.5 gives floor(2 * 1.5) = 3, coords 0, .67, 1.33.
  Node v9 = make_node("Upsample", 2);
  v9.attrs.set("mode", std::string("linear"));
  expect_near(run(v9, 9, {x, f32({4}, {1, 1, 1, 1.5f})})[0], {1, 1, 1, 3},
              {1, 1 + 2 * (2.0f / 3.0f), 3});
}

TEST(Resize, CubicOnALineIsExactInside) {
  // Keys' cubic with a = -0.5 reproduces polynomials up to degree 2, so on x = [0, 1, 2, 3]
  // upsampled to 8 with align_corners (output o reads input coordinate o * 3 / 7) the output
  // equals that coordinate wherever all four taps are inside (o = 3, 4); the edge clamp bends the
  // others. The default a = -0.75 reproduces constants only.
  Node node = make_node("Resize", 4);
  node.attrs.set("mode", std::string("cubic"));
  node.attrs.set("cubic_coeff_a", -0.5f);
  node.attrs.set("coordinate_transformation_mode", std::string("align_corners"));
  const auto y = run(node, 13, {f32({1, 4}, {0, 1, 2, 3}), Tensor(), Tensor(), i64({2}, {1, 8})});
  const std::vector<float> got = values(y[0]);
  for (int o = 3; o <= 4; ++o) EXPECT_NEAR(got[static_cast<size_t>(o)], o * 3.0f / 7.0f, 1e-5f);
  EXPECT_FLOAT_EQ(got[0], 0.0f);
  EXPECT_FLOAT_EQ(got[7], 3.0f);
}

}  // namespace
}  // namespace tessera::testing
