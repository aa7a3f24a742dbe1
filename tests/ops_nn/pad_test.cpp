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
