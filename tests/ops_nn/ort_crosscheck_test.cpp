// Cases where the spec leaves room for interpretation (ceil_mode windows with count_include_pad,
// negative pads with edge/reflect, Resize rounding, output sizes, cubic, crop and antialias,
// ConvTranspose's auto_pad split, MaxPool indices), checked against values ONNX Runtime 1.32
// produced for the same node and inputs (CPU provider; the generating script built one-node
// models with onnx.helper). Hand-derived tests are the main oracle; these pin the choices to what
// users will compare against.
#include <gtest/gtest.h>

#include "nn_test_util.hpp"

namespace tessera::testing {
namespace {

Tensor ramp(Shape shape) {
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i + 1);
  return f32(std::move(shape), v);
}

TEST(OrtCrossCheck, AveragePoolCeilModePadsBothCountModes) {
  Node node = make_node("AveragePool", 1);
  node.attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
  node.attrs.set("strides", std::vector<int64_t>{2, 2});
  node.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  node.attrs.set("ceil_mode", int64_t{1});
  node.attrs.set("count_include_pad", int64_t{1});
  expect_near(run(node, 11, {ramp({1, 1, 4, 4})})[0], {1, 1, 3, 3},
              {1.5555556f, 3.3333333f, 2.f, 6.3333335f, 11.f, 6.f, 4.5f, 7.5f, 4.f});
  node.attrs.set("count_include_pad", int64_t{0});
  expect_near(run(node, 11, {ramp({1, 1, 4, 4})})[0], {1, 1, 3, 3},
              {3.5f, 5.f, 6.f, 9.5f, 11.f, 12.f, 13.5f, 15.f, 16.f});
}

TEST(OrtCrossCheck, AveragePoolDilationsOpset19) {
  Node node = make_node("AveragePool", 1);
  node.attrs.set("kernel_shape", std::vector<int64_t>{2, 2});
  node.attrs.set("dilations", std::vector<int64_t>{2, 2});
  node.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  node.attrs.set("count_include_pad", int64_t{1});
  expect_near(run(node, 19, {ramp({1, 1, 4, 4})})[0], {1, 1, 4, 4},
              {1.5f, 3, 3.5f, 1.75f, 3, 6, 7, 3.5f, 5, 10, 11, 5.5f, 2.5f, 5, 5.5f, 2.75f});
  Node ceil = make_node("AveragePool", 1);
  ceil.attrs.set("kernel_shape", std::vector<int64_t>{2, 2});
  ceil.attrs.set("dilations", std::vector<int64_t>{2, 2});
  ceil.attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  ceil.attrs.set("strides", std::vector<int64_t>{2, 2});
  ceil.attrs.set("ceil_mode", int64_t{1});
  expect_near(run(ceil, 19, {ramp({1, 1, 4, 4})})[0], {1, 1, 3, 3},
              {6, 7, 8, 10, 11, 12, 14, 15, 16});
}

TEST(OrtCrossCheck, MaxPoolIndicesWithPadsBothStorageOrders) {
  const Tensor x = f32({1, 1, 4, 5}, {5, 1, 2, 9, 3, 3, 0, 7, 8, 1, 2, 6, 4, 4, 4, 4, 1, 2, 3, 9});
  Node node = make_node("MaxPool", 1, 2);
  node.attrs.set("kernel_shape", std::vector<int64_t>{2, 3});
  node.attrs.set("strides", std::vector<int64_t>{2, 2});
  node.attrs.set("pads", std::vector<int64_t>{1, 0, 0, 1});
  auto y = run(node, 12, {x});
  expect_near(y[0], {1, 1, 2, 2}, {5, 9, 7, 8});
  EXPECT_EQ(y[1].to_int64_vector(), (std::vector<int64_t>{0, 3, 7, 8}));
  node.attrs.set("storage_order", int64_t{1});
  EXPECT_EQ(run(node, 12, {x})[1].to_int64_vector(), (std::vector<int64_t>{0, 12, 9, 13}));
}

TEST(OrtCrossCheck, PadCropsBeforeEdgeAndReflect) {
  Node edge = make_node("Pad", 2);
  edge.attrs.set("mode", std::string("edge"));
  expect_near(run(edge, 11, {ramp({5}), i64({2}, {-2, 2})})[0], {5}, {3, 4, 5, 5, 5});
  Node reflect = make_node("Pad", 2);
  reflect.attrs.set("mode", std::string("reflect"));
  expect_near(run(reflect, 11, {ramp({5}), i64({2}, {2, -1})})[0], {6}, {3, 2, 1, 2, 3, 4});
}

TEST(OrtCrossCheck, ResizeOpset10Nearest) {
  Node node = make_node("Resize", 2);
  expect_near(run(node, 10, {ramp({1, 1, 2, 4}), f32({4}, {1, 1, 0.6f, 0.6f})})[0], {1, 1, 1, 2},
              {1, 3});
  expect_near(run(node, 10, {ramp({1, 1, 2, 2}), f32({4}, {1, 1, 2, 3})})[0], {1, 1, 4, 6},
              {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
}

TEST(OrtCrossCheck, ResizeDownsampling) {
  // half_pixel linear 5 -> 3 (scale 0.6); half_pixel_symmetric (opset 19) gives the same here.
  Node lin = make_node("Resize", 3);
  lin.attrs.set("mode", std::string("linear"));
  expect_near(run(lin, 13, {ramp({1, 5}), Tensor(), f32({2}, {1, 0.6f})})[0], {1, 3},
              {1.3333333f, 3.f, 4.6666665f});
  lin.attrs.set("coordinate_transformation_mode", std::string("half_pixel_symmetric"));
  expect_near(run(lin, 19, {ramp({1, 5}), Tensor(), f32({2}, {1, 0.6f})})[0], {1, 3},
              {1.3333333f, 2.9999998f, 4.6666665f});
  // align_corners linear 2x4 -> 2x3 by sizes.
  Node ac = make_node("Resize", 4);
  ac.attrs.set("mode", std::string("linear"));
  ac.attrs.set("coordinate_transformation_mode", std::string("align_corners"));
  expect_near(run(ac, 13, {ramp({1, 1, 2, 4}), Tensor(), Tensor(), i64({4}, {1, 1, 2, 3})})[0],
              {1, 1, 2, 3}, {1, 2.5f, 4, 5, 6.5f, 8});
  // align_corners by scales 2x4 * 0.6 -> 1x2: ONNX Runtime divides by the integer output length
  // minus 1, so coordinate 1 maps to 3 (the ONNX reference would use 2.4 - 1 and give 3.14).
  Node acs = make_node("Resize", 3);
  acs.attrs.set("mode", std::string("linear"));
  acs.attrs.set("coordinate_transformation_mode", std::string("align_corners"));
  expect_near(run(acs, 13, {ramp({1, 1, 2, 4}), Tensor(), f32({4}, {1, 1, 0.6f, 0.6f})})[0],
              {1, 1, 1, 2}, {1, 4});
  // nearest half_pixel, 10 * 0.7 -> 7 outputs (float32 product, as ORT and ONNX shape
  // inference compute it).
  std::vector<float> x(10);
  for (int i = 0; i < 10; ++i) x[i] = static_cast<float>(i);
  Node near = make_node("Resize", 3);
  expect_near(run(near, 13, {f32({1, 10}, x), Tensor(), f32({2}, {1, 0.7f})})[0], {1, 7},
              {0, 2, 3, 4, 6, 7, 9});
}

TEST(OrtCrossCheck, ResizeCubicCropAndAntialias) {
  // cubic align_corners by scales 4x4 * 0.8 -> 3x3: the integer output length again (the ONNX
  // reference's test_resize_downsample_scales_cubic_align_corners uses 3.2).
  Node ac = make_node("Resize", 3);
  ac.attrs.set("mode", std::string("cubic"));
  ac.attrs.set("coordinate_transformation_mode", std::string("align_corners"));
  expect_near(run(ac, 13, {ramp({1, 1, 4, 4}), Tensor(), f32({4}, {1, 1, 0.8f, 0.8f})})[0],
              {1, 1, 3, 3}, {1, 2.5f, 4, 7, 8.5f, 10, 13, 14.5f, 16}, 1e-4f);
  // cubic a = -0.5 with exclude_outside, half_pixel, 4x4 x2: first row and a middle one.
  Node eo = make_node("Resize", 3);
  eo.attrs.set("mode", std::string("cubic"));
  eo.attrs.set("exclude_outside", int64_t{1});
  eo.attrs.set("cubic_coeff_a", -0.5f);
  const std::vector<float> y =
      values(run(eo, 13, {ramp({1, 1, 4, 4}), Tensor(), f32({4}, {1, 1, 2, 2})})[0]);
  const std::vector<float> ort_row0 = {0.55882347f, 0.814942f, 1.3569825f, 1.897059f,
                                       2.397059f,   2.937135f, 3.4791756f, 3.7352934f};
  const std::vector<float> ort_row3 = {5.9117646f, 6.1678834f, 6.709924f, 7.25f,
                                       7.75f,      8.290076f,  8.832117f, 9.088235f};
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_NEAR(y[i], ort_row0[i], 1e-4f) << i;
    EXPECT_NEAR(y[24 + i], ort_row3[i], 1e-4f) << i;
  }
  // tf_crop_and_resize, linear inside the box, and nearest with a box reaching outside
  // (extrapolation_value 10 there).
  Node crop = make_node("Resize", 4);
  crop.attrs.set("mode", std::string("linear"));
  crop.attrs.set("coordinate_transformation_mode", std::string("tf_crop_and_resize"));
  crop.attrs.set("extrapolation_value", 10.0f);
  expect_near(run(crop, 13,
                  {ramp({1, 1, 4, 4}), f32({8}, {0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f}), Tensor(),
                   i64({4}, {1, 1, 3, 3})})[0],
              {1, 1, 3, 3}, {7.6f, 7.9f, 8.2f, 8.8f, 9.1f, 9.4f, 10, 10.3f, 10.6f}, 1e-4f);
  crop.attrs.set("mode", std::string("nearest"));
  expect_near(run(crop, 13,
                  {ramp({1, 1, 4, 4}), f32({8}, {0, 0, -0.4f, 0.6f, 1, 1, 0.6f, 1.2f}), Tensor(),
                   i64({4}, {1, 1, 3, 3})})[0],
              {1, 1, 3, 3}, {10, 10, 10, 3, 4, 10, 11, 12, 10});
  // antialias, 4x4 * 0.6 -> 2x2.
  Node aa = make_node("Resize", 3);
  aa.attrs.set("mode", std::string("linear"));
  aa.attrs.set("antialias", int64_t{1});
  expect_near(run(aa, 18, {ramp({1, 1, 4, 4}), Tensor(), f32({4}, {1, 1, 0.6f, 0.6f})})[0],
              {1, 1, 2, 2}, {2.875f, 4.5f, 9.375f, 11.0f}, 1e-4f);
  aa.attrs.set("mode", std::string("cubic"));
  expect_near(run(aa, 18, {ramp({1, 1, 4, 4}), Tensor(), f32({4}, {1, 1, 0.6f, 0.6f})})[0],
              {1, 1, 2, 2}, {2.5180712f, 4.2858858f, 9.5893297f, 11.357143f}, 1e-4f);
}

TEST(OrtCrossCheck, ConvTransposeAutoPadSplit) {
  // ONNX Runtime, like the spec, puts the odd pad at the start for SAME_UPPER's output
  // (x [1, 2], kernel [1, 1, 1], stride 2; full output [1, 1, 3, 2, 2]).
  Node node = make_node("ConvTranspose", 2);
  node.attrs.set("strides", std::vector<int64_t>{2});
  node.attrs.set("auto_pad", std::string("SAME_UPPER"));
  const Tensor x = f32({1, 1, 2}, {1, 2});
  const Tensor w = f32({1, 1, 3}, {1, 1, 1});
  expect_near(run(node, 11, {x, w})[0], {1, 1, 4}, {1, 1, 3, 2});
  node.attrs.set("auto_pad", std::string("SAME_LOWER"));
  expect_near(run(node, 11, {x, w})[0], {1, 1, 4}, {1, 3, 2, 2});
}

}  // namespace
}  // namespace tessera::testing
