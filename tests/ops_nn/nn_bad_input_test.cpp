// Bad input for the neural-network ops of issue 16 (LayerNormalization, GroupNormalization,
// InstanceNormalization, ConvTranspose, DepthToSpace, SpaceToDepth, Tile, Resize, Upsample,
// MatMul, Softmax/LogSoftmax): each case expects an error naming the node and the attribute or
// input at fault.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "nn_test_util.hpp"

namespace tessera::testing {
namespace {

const Tensor kX4 = f32({1, 4, 2, 2}, std::vector<float>(16, 1.0f));
const Tensor kC4 = f32({4}, {1, 1, 1, 1});

TEST(LayerNormalizationBadInput, NamesNodeAndAttribute) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor scale = f32({3}, {1, 1, 1});
  Node node = make_node("LayerNormalization", 2);
  node.attrs.set("axis", int64_t{2});
  expect_error(node, 17, {x, scale}, "attribute 'axis' = 2 is out of range");
  node.attrs.set("axis", int64_t{-3});
  expect_error(node, 17, {x, scale}, "attribute 'axis' = -3 is out of range");
  node = make_node("LayerNormalization", 2);
  node.attrs.set("epsilon", -1.0f);
  expect_error(node, 17, {x, scale}, "attribute 'epsilon'");
  node.attrs.set("epsilon", std::numeric_limits<float>::quiet_NaN());
  expect_error(node, 17, {x, scale}, "attribute 'epsilon'");
  node = make_node("LayerNormalization", 2);
  node.attrs.set("stash_type", int64_t{7});
  expect_error(node, 17, {x, scale}, "attribute 'stash_type' = 7");
  node = make_node("LayerNormalization", 2);
  expect_error(node, 17, {x, f32({2}, {1, 1})}, "input 1 ('Scale') has shape [2]");
  expect_error(make_node("LayerNormalization", 3), 17, {x, scale, f32({2, 2}, {0, 0, 0, 0})},
               "input 2 ('B')");
}

TEST(GroupNormalizationBadInput, NamesNodeAndAttribute) {
  Node node = make_node("GroupNormalization", 3);
  expect_error(node, 21, {kX4, kC4, kC4}, "required attribute 'num_groups'");
  node.attrs.set("num_groups", int64_t{3});
  expect_error(node, 21, {kX4, kC4, kC4}, "attribute 'num_groups' = 3 does not divide the 4");
  node.attrs.set("num_groups", int64_t{0});
  expect_error(node, 21, {kX4, kC4, kC4}, "attribute 'num_groups' = 0 must be positive");
  node.attrs.set("num_groups", int64_t{2});
  // Opset 21 wants one scale per channel, opset 18 one per group.
  expect_error(node, 21, {kX4, f32({2}, {1, 1}), kC4}, "input 1 ('scale') has shape [2]");
  expect_error(node, 18, {kX4, kC4, f32({2}, {0, 0})}, "input 1 ('scale') has shape [4]");
  expect_error(node, 21, {kX4, kC4, f32({2}, {0, 0})}, "input 2 ('bias') has shape [2]");
  node.attrs.set("epsilon", std::numeric_limits<float>::infinity());
  expect_error(node, 21, {kX4, kC4, kC4}, "attribute 'epsilon'");
}

TEST(InstanceNormalizationBadInput, NamesNodeAndInput) {
  const Node node = make_node("InstanceNormalization", 3);
  expect_error(node, 22, {f32({4, 4}, std::vector<float>(16, 0)), kC4, kC4}, "expected rank >= 3");
  expect_error(node, 22, {kX4, f32({3}, {1, 1, 1}), kC4}, "input 1 ('scale') has shape [3]");
  expect_error(node, 22, {kX4, kC4, f32({1}, {0})}, "input 2 ('B') has shape [1]");
  Node eps = make_node("InstanceNormalization", 3);
  eps.attrs.set("epsilon", -0.5f);
  expect_error(eps, 22, {kX4, kC4, kC4}, "attribute 'epsilon'");
}

TEST(ConvTransposeBadInput, NamesNodeAndAttribute) {
  const Tensor x = f32({1, 2, 3}, std::vector<float>(6, 1));
  const Tensor w = f32({2, 1, 2}, std::vector<float>(4, 1));
  Node node = make_node("ConvTranspose", 2);
  node.attrs.set("group", int64_t{3});
  expect_error(node, 11, {x, w}, "attribute 'group' = 3 does not divide the 2 input channels");
  node.attrs.set("group", int64_t{0});
  expect_error(node, 11, {x, w}, "attribute 'group' = 0 must be positive");
  node = make_node("ConvTranspose", 2);
  expect_error(node, 11, {x, f32({3, 1, 2}, std::vector<float>(6, 1))}, "has dim 0 = 3");
  expect_error(node, 11, {x, f32({2, 1, 2, 1}, std::vector<float>(4, 1))}, "same rank");
  node.attrs.set("strides", std::vector<int64_t>{0});
  expect_error(node, 11, {x, w}, "attribute 'strides' values must be >= 1");
  node = make_node("ConvTranspose", 2);
  node.attrs.set("dilations", std::vector<int64_t>{1, 1});
  expect_error(node, 11, {x, w}, "attribute 'dilations' has 2 values");
  node = make_node("ConvTranspose", 2);
  node.attrs.set("output_shape", std::vector<int64_t>{-4});
  expect_error(node, 11, {x, w}, "attribute 'output_shape' values must be positive");
  node = make_node("ConvTranspose", 2);
  node.attrs.set("output_padding", std::vector<int64_t>{1});
  expect_error(node, 11, {x, w}, "attribute 'output_padding' = 1");
  node = make_node("ConvTranspose", 2);
  node.attrs.set("pads", std::vector<int64_t>{2, 2});
  expect_error(node, 11, {x, w}, "attribute 'pads' (2, 2) remove the whole output");
  node.attrs.set("pads", std::vector<int64_t>{-1, 0});
  expect_error(node, 11, {x, w}, "attribute 'pads' values must be >= 0");
  node = make_node("ConvTranspose", 2);
  node.attrs.set("auto_pad", std::string("SAME"));
  expect_error(node, 11, {x, w}, "attribute 'auto_pad' = 'SAME'");
  node = make_node("ConvTranspose", 2);
  node.attrs.set("kernel_shape", std::vector<int64_t>{3});
  expect_error(node, 11, {x, w}, "attribute 'kernel_shape' [3] does not match");
  expect_error(make_node("ConvTranspose", 2), 11, {x, Tensor(DType::kFloat32, {2, 1, 0})},
               "has an empty kernel dim 0");
  expect_error(make_node("ConvTranspose", 2), 11, {Tensor(DType::kFloat32, {1, 2, 0}), w},
               "has an empty spatial dim 0");
  expect_error(make_node("ConvTranspose", 3), 11, {x, w, f32({2}, {0, 0})},
               "bias (input 2) has shape [2]; expected [1]");
}

TEST(DepthToSpaceBadInput, NamesNodeAndAttribute) {
  Node node = make_node("DepthToSpace", 1);
  expect_error(node, 13, {kX4}, "required attribute 'blocksize'");
  node.attrs.set("blocksize", int64_t{0});
  expect_error(node, 13, {kX4}, "attribute 'blocksize' = 0 must be positive");
  node.attrs.set("blocksize", int64_t{3});
  expect_error(node, 13, {kX4}, "attribute 'blocksize' = 3: its square 9 does not divide the 4");
  node.attrs.set("blocksize", int64_t{2});
  node.attrs.set("mode", std::string("RCD"));
  expect_error(node, 13, {kX4}, "attribute 'mode' = 'RCD'");
  node.attrs.set("mode", std::string("DCR"));
  expect_error(node, 13, {f32({4, 2, 2}, std::vector<float>(16, 0))}, "expected rank 4");
  node.attrs.set("blocksize", int64_t{1} << 32);
  expect_error(node, 13, {kX4}, "overflows int64");
}

TEST(SpaceToDepthBadInput, NamesNodeAndAttribute) {
  Node node = make_node("SpaceToDepth", 1);
  expect_error(node, 13, {kX4}, "required attribute 'blocksize'");
  node.attrs.set("blocksize", int64_t{-2});
  expect_error(node, 13, {kX4}, "attribute 'blocksize' = -2 must be positive");
  node.attrs.set("blocksize", int64_t{3});
  expect_error(node, 13, {kX4}, "attribute 'blocksize' = 3 does not divide the spatial dims 2 x 2");
}

TEST(TileBadInput, NamesNodeAndInput) {
  const Node node = make_node("Tile", 2);
  const Tensor x = f32({2, 2}, {1, 2, 3, 4});
  expect_error(node, 13, {x, i64({2}, {1, -1})}, "input 1 ('repeats') value -1 at dim 1");
  expect_error(node, 13, {x, i64({3}, {1, 1, 1})}, "input 1 ('repeats') has 3 values");
  expect_error(node, 13, {x, i64({1, 2}, {1, 1})}, "input 1 ('repeats') must be 1-D");
  expect_error(node, 13, {x, i64({2}, {int64_t{1} << 62, 4})}, "output dim 0");
}

TEST(ResizeBadInput, NamesNodeAndInput) {
  const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  Node node = make_node("Resize", 4);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  expect_error(node, 13, {x, Tensor(), f32({4}, {1, 1, 0, 2}), Tensor()},
               "input 2 ('scales') values must be finite and > 0, got 0");
  expect_error(node, 13, {x, Tensor(), f32({4}, {1, 1, -2, 2}), Tensor()}, "input 2 ('scales')");
  expect_error(node, 13, {x, Tensor(), f32({4}, {1, 1, nan, 2}), Tensor()}, "input 2 ('scales')");
  expect_error(node, 13, {x, Tensor(), f32({3}, {1, 2, 2}), Tensor()},
               "input 2 ('scales') has 3 values; expected 4");
  expect_error(node, 13, {x, Tensor(), Tensor(), i64({4}, {1, 1, -3, 4})},
               "input 3 ('sizes') values must be > 0");
  expect_error(node, 13, {x, Tensor(), f32({4}, {1, 1, 2, 2}), i64({4}, {1, 1, 4, 4})},
               "both scales and sizes");
  expect_error(node, 10, {x, f32({4}, {1, 1, 0, 2})}, "input 1 ('scales')");
  node.attrs.set("mode", std::string("bicubic"));
  expect_error(node, 13, {x, Tensor(), f32({4}, {1, 1, 2, 2}), Tensor()},
               "attribute 'mode' = 'bicubic'");
  node = make_node("Resize", 4);
  node.attrs.set("coordinate_transformation_mode", std::string("corners"));
  expect_error(node, 13, {x, Tensor(), f32({4}, {1, 1, 2, 2}), Tensor()},
               "attribute 'coordinate_transformation_mode' = 'corners'");
  node = make_node("Resize", 4);
  node.attrs.set("nearest_mode", std::string("round"));
  expect_error(node, 13, {x, Tensor(), f32({4}, {1, 1, 2, 2}), Tensor()},
               "attribute 'nearest_mode' = 'round'");
  node = make_node("Resize", 4);
  node.attrs.set("axes", std::vector<int64_t>{2, 4});
  expect_error(node, 18, {x, Tensor(), f32({2}, {2, 2}), Tensor()}, "attribute 'axes'");
  node = make_node("Resize", 4);
  node.attrs.set("mode", std::string("cubic"));
  node.attrs.set("cubic_coeff_a", std::numeric_limits<float>::infinity());
  expect_error(node, 13, {x, Tensor(), f32({4}, {1, 1, 2, 2}), Tensor()},
               "attribute 'cubic_coeff_a'");
  node = make_node("Resize", 4);
  node.attrs.set("coordinate_transformation_mode", std::string("tf_crop_and_resize"));
  expect_error(node, 13, {x, Tensor(), Tensor(), i64({4}, {1, 1, 3, 3})}, "input 1 ('roi')");
  expect_error(node, 13, {x, f32({4}, {0, 0, 1, 1}), Tensor(), i64({4}, {1, 1, 3, 3})},
               "input 1 ('roi') must be a float32 tensor of shape [8]");
}

TEST(UpsampleBadInput, NamesNodeAndAttribute) {
  const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  Node node = make_node("Upsample", 1);
  expect_error(node, 7, {x}, "required attribute 'scales'");
  node.attrs.set("scales", std::vector<float>{1, 1, 0.5f, 2});
  expect_error(node, 7, {x}, "attribute 'scales' value 0.500000 at dim 2 is below 1");
  node.attrs.set("scales", std::vector<float>{1, 1, 2});
  expect_error(node, 7, {x}, "attribute 'scales' has 3 values but input 0 has rank 4");
  node.attrs.set("scales", std::vector<float>{1, 1, std::numeric_limits<float>::quiet_NaN(), 2});
  expect_error(node, 7, {x}, "attribute 'scales' values must be finite");
  node.attrs.set("scales", std::vector<float>{1, 1, 2, 2});
  node.attrs.set("mode", std::string("cubic"));
  expect_error(node, 7, {x}, "attribute 'mode' = 'cubic'");
  const Node v9 = make_node("Upsample", 2);
  expect_error(v9, 9, {x, f32({4}, {1, 1, -1, 2})}, "input 1 ('scales') values must be finite");
}

TEST(MatMulBadInput, NamesNode) {
  const Node node = make_node("MatMul", 2);
  expect_error(node, 13, {f32({2, 2, 3}, std::vector<float>(12, 1)), f32({2, 2}, {1, 1, 1, 1})},
               "inner dims differ");
  expect_error(node, 13, {f32({3, 1, 2}, std::vector<float>(6, 1)), f32({2, 2, 1}, {1, 1, 1, 1})},
               "cannot broadcast");
}

TEST(SoftmaxBadInput, NamesNodeAndAttribute) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    Node node = make_node(op, 1);
    node.attrs.set("axis", int64_t{2});
    expect_error(node, 13, {x}, "attribute 'axis' = 2 is out of range");
    expect_error(node, 11, {x}, "attribute 'axis' = 2 is out of range");
    node.attrs.set("axis", int64_t{-3});
    expect_error(node, 13, {x}, "attribute 'axis' = -3 is out of range");
  }
}

TEST(OutputSizeBadInput, OverflowingOutputNamesTheNode) {
  // Each dim fits int64 but the element count does not: the registry's check names the node.
  const Node node = make_node("Tile", 2);
  expect_error(node, 13, {f32({1, 1}, {1}), i64({2}, {int64_t{1} << 40, int64_t{1} << 40})},
               "output 0: shape [1099511627776, 1099511627776] overflows int64");
}

}  // namespace
}  // namespace tessera::testing
