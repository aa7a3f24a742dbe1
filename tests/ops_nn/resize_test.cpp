// Resize (nearest with its rounding modes, N-linear, coordinate transformation modes, scales,
// sizes, opset 10 form) against hand-worked values.
#include <gtest/gtest.h>

#include "nn_test_util.hpp"

namespace tessera::testing {
namespace {

// x[r][c] = 1 + c + 2r: linear in both axes, so bilinear interpolation at input coordinates
// (r, c) (clamped to [0,1]) is exactly 1 + c + 2r.
const Tensor kX = f32({1, 1, 2, 2}, {1, 2, 3, 4});

Node resize(const std::string& mode, const std::string& coord = "",
            const std::string& nearest = "") {
  Node node = make_node("Resize", 4);
  node.attrs.set("mode", mode);
  if (!coord.empty()) node.attrs.set("coordinate_transformation_mode", coord);
  if (!nearest.empty()) node.attrs.set("nearest_mode", nearest);
  return node;
}

std::vector<Tensor> by_scales(const Tensor& x, std::vector<float> scales) {
  const int64_t n = static_cast<int64_t>(scales.size());
  return {x, Tensor(), f32({n}, scales), Tensor()};
}
std::vector<Tensor> by_sizes(const Tensor& x, std::vector<int64_t> sizes) {
  const int64_t n = static_cast<int64_t>(sizes.size());
  return {x, Tensor(), Tensor(), i64({n}, sizes)};
}

TEST(Resize, NearestAsymmetricPreferFloorVsCeil) {
  // Upscale x2: input coords o/2 = 0, .5, 1, 1.5 -> prefer_floor 0,0,1,1; prefer_ceil 0,1,1,2->1.
  expect_near(run(resize("nearest", "asymmetric"), 13, by_scales(kX, {1, 1, 2, 2}))[0],
              {1, 1, 4, 4}, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  expect_near(
      run(resize("nearest", "asymmetric", "round_prefer_ceil"), 13, by_scales(kX, {1, 1, 2, 2}))[0],
      {1, 1, 4, 4}, {1, 2, 2, 2, 3, 4, 4, 4, 3, 4, 4, 4, 3, 4, 4, 4});
  // floor / ceil on a 1-D row: coords 0, .5, 1, 1.5.
  const Tensor row = f32({1, 2}, {1, 2});
  expect_near(run(resize("nearest", "asymmetric", "floor"), 13, by_scales(row, {1, 2}))[0], {1, 4},
              {1, 1, 2, 2});
  expect_near(run(resize("nearest", "asymmetric", "ceil"), 13, by_scales(row, {1, 2}))[0], {1, 4},
              {1, 2, 2, 2});
}

TEST(Resize, NearestHalfPixelAndTfHalfPixel) {
  // half_pixel (default) x2: (o + .5)/2 - .5 = -.25, .25, .75, 1.25 -> 0, 0, 1, 1.
  // tf_half_pixel_for_nearest: (o + .5)/2 = .25, .75, 1.25, 1.75 -> 0, 1, 1, 2->1.
  const Tensor row = f32({1, 2}, {1, 2});
  expect_near(run(resize("nearest"), 13, by_scales(row, {1, 2}))[0], {1, 4}, {1, 1, 2, 2});
  expect_near(run(resize("nearest", "tf_half_pixel_for_nearest"), 13, by_scales(row, {1, 2}))[0],
              {1, 4}, {1, 2, 2, 2});
}

TEST(Resize, Opset10DownsampleNearest) {
  // Opset 10: inputs (X, scales), asymmetric. Width 4 * 0.6 -> 2, coords 0 and 1/0.6 = 1.67 -> 2.
  Node node = make_node("Resize", 2);
  auto y =
      run(node, 10, {f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), f32({4}, {1, 1, 0.6f, 0.6f})});
  expect_near(y[0], {1, 1, 1, 2}, {1, 3});
}

TEST(Resize, LinearHalfPixel) {
  // Coords per axis: -.25, .25, .75, 1.25 clamped to 0, .25, .75, 1.
  const float c[4] = {0, 0.25f, 0.75f, 1};
  std::vector<float> expected;
  for (float r : c)
    for (float q : c) expected.push_back(1 + q + 2 * r);
  expect_near(run(resize("linear"), 13, by_scales(kX, {1, 1, 2, 2}))[0], {1, 1, 4, 4}, expected);
}

TEST(Resize, LinearAlignCornersWithSizes) {
  // 2 -> 3 with align_corners: coords 0, .5, 1.
  expect_near(run(resize("linear", "align_corners"), 13, by_sizes(kX, {1, 1, 3, 3}))[0],
              {1, 1, 3, 3}, {1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4});
}

TEST(Resize, LinearAsymmetric) {
  // Coords 0, .5, 1, 1.5 -> clamp 1.
  expect_near(run(resize("linear", "asymmetric"), 13, by_scales(f32({1, 2}, {1, 2}), {1, 2}))[0],
              {1, 4}, {1, 1.5f, 2, 2});
}

TEST(Resize, PytorchHalfPixelToSingleSample) {
  // To 1x1: pytorch_half_pixel samples coordinate 0; half_pixel samples (0 + .5)/.5 - .5 = .5.
  expect_near(run(resize("linear", "pytorch_half_pixel"), 13, by_sizes(kX, {1, 1, 1, 1}))[0],
              {1, 1, 1, 1}, {1});
  expect_near(run(resize("linear", "half_pixel"), 13, by_sizes(kX, {1, 1, 1, 1}))[0], {1, 1, 1, 1},
              {2.5f});
}

TEST(Resize, Opset11EmptyScalesWithSizes) {
  // Opset 11 models pass an empty scales tensor when sizes are used.
  Node node = resize("nearest", "asymmetric");
  auto y = run(node, 11, {kX, f32({0}, {}), f32({0}, {}), i64({4}, {1, 1, 1, 4})});
  expect_near(y[0], {1, 1, 1, 4}, {1, 1, 2, 2});
}

TEST(Resize, Opset18AxesAndKeepAspectRatio) {
  // axes [2,3] with sizes [3,3] on 2x4, not_larger: scale min(3/2, 3/4) = .75 -> 2x3 (rounded
  // 1.5 -> 2, 3); not_smaller: 1.5 -> 3x6.
  Node node = resize("nearest", "asymmetric");
  node.attrs.set("axes", std::vector<int64_t>{2, 3});
  node.attrs.set("keep_aspect_ratio_policy", std::string("not_larger"));
  const Tensor x = f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(infer_shape(node, 18, by_sizes(x, {3, 3})), (Shape{1, 1, 2, 3}));
  node.attrs.set("keep_aspect_ratio_policy", std::string("not_smaller"));
  EXPECT_EQ(infer_shape(node, 18, by_sizes(x, {3, 3})), (Shape{1, 1, 3, 6}));
  // stretch (default) with axes: only the named axis changes; scales 2 on axis 1, asymmetric.
  Node s = resize("nearest", "asymmetric");
  s.attrs.set("axes", std::vector<int64_t>{1});
  expect_near(run(s, 18, by_scales(f32({1, 2}, {1, 2}), {2}))[0], {1, 4}, {1, 1, 2, 2});
}

TEST(Resize, BadVariantsNameTheNode) {
  Node crop = resize("linear", "tf_crop_and_resize");
  crop.name = "rs_crop";
  expect_error(crop, 13, by_scales(kX, {1, 1, 2, 2}), "needs input 1 ('roi')");
  Node both = resize("nearest");
  both.name = "rs_both";
  expect_error(both, 13, {kX, Tensor(), f32({4}, {1, 1, 2, 2}), i64({4}, {1, 1, 4, 4})},
               "both scales and sizes");
  expect_error(both, 13, {kX, Tensor(), Tensor(), Tensor()}, "neither scales nor sizes");
  Node badmode = resize("nearest", "", "round_half_even");
  badmode.name = "rs_nm";
  expect_error(badmode, 13, by_scales(kX, {1, 1, 2, 2}), "nearest_mode");
  Node count = resize("nearest");
  count.name = "rs_count";
  expect_error(count, 13, by_scales(kX, {2, 2}), "('scales') has 2 values");
}

}  // namespace
}  // namespace tessera::testing
