// Cases where the spec leaves room for interpretation (ceil_mode windows with count_include_pad,
// negative pads with edge/reflect, Resize rounding and output sizes, MaxPool indices), checked
// against values ONNX Runtime 1.32 produced for the same node and inputs (CPU provider; the
// generating script built one-node models with onnx.helper). Hand-derived tests are the main
// oracle; these pin the choices to what users will compare against.
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

}  // namespace
}  // namespace tessera::testing
