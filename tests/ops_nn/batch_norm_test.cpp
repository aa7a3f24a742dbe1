// BatchNormalization (inference) against hand-worked values.
#include <gtest/gtest.h>

#include <cmath>

#include "nn_test_util.hpp"

namespace tessera::testing {
namespace {

// X [1,2,1,2]: channel 0 = [1,3], channel 1 = [2,4]; scale [2,1], B [0.5,-1], mean [2,3],
// var [4,0.25]. With epsilon 0: channel 0: 2*(x-2)/2 + 0.5 -> -0.5, 1.5;
// channel 1: (x-3)/0.5 - 1 -> -3, 1.
std::vector<Tensor> bn_inputs() {
  return {f32({1, 2, 1, 2}, {1, 3, 2, 4}), f32({2}, {2, 1}), f32({2}, {0.5f, -1}), f32({2}, {2, 3}),
          f32({2}, {4, 0.25f})};
}

TEST(BatchNormalization, PerChannel) {
  Node node = make_node("BatchNormalization", 5);
  node.attrs.set("epsilon", 0.0f);
  expect_near(run(node, 15, bn_inputs())[0], {1, 2, 1, 2}, {-0.5f, 1.5f, -3, 1});
}

TEST(BatchNormalization, DefaultEpsilonIsUsed) {
  // epsilon 1e-5: channel 0 divides by sqrt(4.00001), channel 1 by sqrt(0.25001).
  Node node = make_node("BatchNormalization", 5);
  const float s0 = 1.0f / std::sqrt(4.00001f), s1 = 1.0f / std::sqrt(0.25001f);
  expect_near(run(node, 9, bn_inputs())[0], {1, 2, 1, 2},
              {2 * -1 * s0 + 0.5f, 2 * 1 * s0 + 0.5f, -1 * s1 - 1, 1 * s1 - 1}, 1e-6f);
}

TEST(BatchNormalization, Opset7SpatialZeroIsPerElement) {
  // spatial = 0: statistics per (C, H, W) element; shape [2,1,2] here.
  Node node = make_node("BatchNormalization", 5);
  node.attrs.set("epsilon", 0.0f);
  node.attrs.set("spatial", int64_t{0});
  auto y = run(
      node, 7,
      {f32({1, 2, 1, 2}, {1, 3, 2, 4}), f32({2, 1, 2}, {1, 2, 3, 4}), f32({2, 1, 2}, {0, 0, 0, 10}),
       f32({2, 1, 2}, {1, 1, 1, 1}), f32({2, 1, 2}, {1, 4, 1, 1})});
  // (x - 1) / sqrt(var) * scale + b: (0)/1*1, (2)/2*2, (1)/1*3, (3)/1*4 + 10.
  expect_near(y[0], {1, 2, 1, 2}, {0, 2, 3, 22});
}

TEST(BatchNormalization, TrainingIsUnsupported) {
  Node node = make_node("BatchNormalization", 5, 1, "bn_train");
  node.attrs.set("training_mode", int64_t{1});
  expect_error<UnsupportedError>(node, 15, bn_inputs(), "training_mode");
  Node stats = make_node("BatchNormalization", 5, 3, "bn_stats");
  expect_error<UnsupportedError>(stats, 15, bn_inputs(), "output 1");
}

TEST(BatchNormalization, WrongStatisticsShapeNamesTheNode) {
  auto inputs = bn_inputs();
  inputs[3] = f32({3}, {0, 0, 0});
  expect_error(make_node("BatchNormalization", 5, 1, "bn_shape"), 15, inputs, "input_mean");
}

}  // namespace
}  // namespace tessera::testing
