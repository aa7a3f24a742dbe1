// BatchNormalization (inference, and training mode's batch statistics) against hand-worked values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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

TEST(BatchNormalization, StatisticsOutputsBeforeOpset14AreUnsupported) {
  Node stats = make_node("BatchNormalization", 5, 3, "bn_stats");
  expect_error<UnsupportedError>(stats, 13, bn_inputs(), "output 1");
  Node training = make_node("BatchNormalization", 5, 3, "bn_stats");
  training.attrs.set("momentum", std::numeric_limits<float>::infinity());
  training.attrs.set("training_mode", int64_t{1});
  expect_error(training, 15, bn_inputs(), "attribute 'momentum'");
}

TEST(BatchNormalization, TrainingModeUsesTheBatchStatistics) {
  // One channel, values 1 3 5 7 over batch 2: mean 4, biased variance (9 + 1 + 1 + 9) / 4 = 5.
  Node node = make_node("BatchNormalization", 5, 3, "bn_train");
  node.attrs.set("epsilon", 0.0f);
  node.attrs.set("momentum", 0.9f);
  node.attrs.set("training_mode", int64_t{1});
  auto y = run(node, 15,
               {f32({2, 1, 1, 2}, {1, 3, 5, 7}), f32({1}, {2}), f32({1}, {1}), f32({1}, {0}),
                f32({1}, {1})});
  const float s = 2.0f / std::sqrt(5.0f);
  expect_near(y[0], {2, 1, 1, 2}, {-3 * s + 1, -1 * s + 1, 1 * s + 1, 3 * s + 1});
  expect_near(y[1], {1}, {0.4f});  // 0 * 0.9 + 4 * 0.1
  expect_near(y[2], {1}, {1.4f});  // 1 * 0.9 + 5 * 0.1
}

TEST(BatchNormalization, WrongStatisticsShapeNamesTheNode) {
  auto inputs = bn_inputs();
  inputs[3] = f32({3}, {0, 0, 0});
  expect_error(make_node("BatchNormalization", 5, 1, "bn_shape"), 15, inputs, "input_mean");
}

}  // namespace
}  // namespace tessera::testing
