// Pad (constant/reflect/edge/wrap, attribute and input forms, negative pads) against hand-worked
// values.
#include <gtest/gtest.h>

#include "nn_test_util.hpp"

namespace tessera::testing {
namespace {

const Tensor kRow = f32({4}, {1, 2, 3, 4});

Node pad(const std::string& mode, size_t inputs = 2) {
  Node node = make_node("Pad", inputs);
  node.attrs.set("mode", mode);
  return node;
}

TEST(Pad, ModesOnOneAxis) {
  // pads [2, 3] around [1,2,3,4].
  const Tensor pads = i64({2}, {2, 3});
  expect_near(run(pad("constant"), 11, {kRow, pads})[0], {9}, {0, 0, 1, 2, 3, 4, 0, 0, 0});
  expect_near(run(pad("constant", 3), 11, {kRow, pads, f32({}, {9})})[0], {9},
              {9, 9, 1, 2, 3, 4, 9, 9, 9});
  expect_near(run(pad("reflect"), 11, {kRow, pads})[0], {9}, {3, 2, 1, 2, 3, 4, 3, 2, 1});
  expect_near(run(pad("edge"), 11, {kRow, pads})[0], {9}, {1, 1, 1, 2, 3, 4, 4, 4, 4});
}

TEST(Pad, Reflect2D) {
  // [[1,2,3],[4,5,6]], pads begin (1,1), end (0,1): row -1 mirrors row 1, col -1 col 1,
  // col 3 col 1.
  expect_near(run(pad("reflect"), 11, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({4}, {1, 1, 0, 1})})[0],
              {3, 5}, {5, 4, 5, 6, 5, 2, 1, 2, 3, 2, 5, 4, 5, 6, 5});
}

// Reflect mirrors about the edge element without repeating it, so an axis of n elements gives at
// most n - 1 on a side. ONNX Runtime 1.32 refuses more ("Pad reflect: pre-pad (4) exceeds
// maximum allowed (3)"), as does the cpu plugin; the reference refuses it at inference, naming
// the node, the pads and the shape, and computes the largest pads as ONNX Runtime does.
TEST(Pad, ReflectBeyondTheAxisIsRefusedAsOnnxRuntimeDoes) {
  Node node = pad("reflect");
  node.name = "pad_reflect";
  expect_near(run(node, 11, {kRow, i64({2}, {3, 3})})[0], {10}, {4, 3, 2, 1, 2, 3, 4, 3, 2, 1});
  expect_error(node, 11, {kRow, i64({2}, {4, 0})},
               "mode 'reflect' pads axis 0 by 4 before it, but an axis of 4 elements reflects at "
               "most 3 (pads [4, 0], input shape [4]); use mode 'edge' or 'constant', or smaller "
               "pads");
  expect_error(node, 11, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({4}, {0, 0, 0, 3})},
               "pads axis 1 by 3 after it, but an axis of 3 elements reflects at most 2 (pads "
               "[0, 0, 0, 3], input shape [2, 3])");
  // Cropping comes first: [1..5] cropped by 2 in front keeps 3 elements.
  expect_error(node, 11, {f32({5}, {1, 2, 3, 4, 5}), i64({2}, {-2, 3})},
               "pads axis 0 by 3 after it, but an axis of 3 elements (after cropping) reflects at "
               "most 2 (pads [-2, 3], input shape [5])");
  expect_error(node, 11, {f32({1}, {7}), i64({2}, {1, 0})},
               "pads axis 0 by 1 before it, but an axis of 1 element reflects at most 0");
  // An axis of one element that is not padded is fine (ONNX Runtime: [[1, 0, 1, 2, 1]]).
  expect_near(run(node, 11, {f32({1, 3}, {0, 1, 2}), i64({4}, {0, 1, 0, 1})})[0], {1, 5},
              {1, 0, 1, 2, 1});
}

TEST(Pad, NegativePadsCrop) {
  const Tensor x = f32({5}, {1, 2, 3, 4, 5});
  expect_near(run(pad("constant"), 11, {x, i64({2}, {-1, 2})})[0], {6}, {2, 3, 4, 5, 0, 0});
  // Edge reads the cropped tensor: [3,4,5] padded by 2 at the end.
  expect_near(run(pad("edge"), 11, {x, i64({2}, {-2, 2})})[0], {5}, {3, 4, 5, 5, 5});
  expect_near(run(pad("constant"), 11, {x, i64({2}, {-1, -1})})[0], {3}, {2, 3, 4});
}

TEST(Pad, Opset2AttributeForm) {
  Node node = make_node("Pad", 1);
  node.attrs.set("pads", std::vector<int64_t>{1, 1});
  node.attrs.set("value", 7.5f);
  expect_near(run(node, 2, {kRow})[0], {6}, {7.5f, 1, 2, 3, 4, 7.5f});
}

TEST(Pad, Opset18AxesAndOpset19Wrap) {
  Node node = make_node("Pad", 4);
  expect_near(run(node, 18,
                  {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({2}, {1, 1}), Tensor(), i64({1}, {-1})})[0],
              {2, 5}, {0, 1, 2, 3, 0, 0, 4, 5, 6, 0});
  expect_near(run(pad("wrap"), 19, {f32({3}, {1, 2, 3}), i64({2}, {2, 2})})[0], {7},
              {2, 3, 1, 2, 3, 1, 2});
}

TEST(Pad, Int64Data) {
  auto y = run(pad("constant", 3), 11, {i64({2}, {5, 6}), i64({2}, {1, 0}), i64({}, {-3})});
  EXPECT_EQ(y[0].to_int64_vector(), (std::vector<int64_t>{-3, 5, 6}));
}

TEST(Pad, BadInputsNameTheNode) {
  Node node = make_node("Pad", 2, 1, "pad_bad");
  expect_error(node, 11, {kRow, i64({3}, {1, 1, 1})}, "pads has 3 values");
  node.attrs.set("mode", std::string("symmetric"));
  expect_error(node, 11, {kRow, i64({2}, {1, 1})}, "mode");
  Node wrap = pad("wrap");
  wrap.name = "pad_wrap";
  expect_error(wrap, 18, {kRow, i64({2}, {1, 1})}, "opset 19");
  Node crop = pad("constant");
  crop.name = "pad_crop";
  expect_error(crop, 11, {kRow, i64({2}, {-3, -2})}, "cropped");
}

}  // namespace
}  // namespace tessera::testing
