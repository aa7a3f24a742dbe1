// Lowerings used by several adreno op files: texel-wise unary ops, 2-D pooling, buffer aliases.
#pragma once

#include "ops/op.hpp"
#include "tessera_opencl/strided.hpp"

namespace tessera::adreno {

// Codes of unary_image in kernels/elementwise.cl.
enum class UnaryOp : int32_t {
  kRelu = 0,
  kClip = 1,
  kSigmoid = 2,
  kHardSigmoid = 3,
  kHardSwish = 4,
  kErf = 5,
  kTanh = 6
};
void lower_unary(Lowering& lw, const NodeView& node, int32_t index, UnaryOp op, float a, float b);

// Sub / Mul / Div / Add (codes of binary_op in kernels/elementwise.cl) of an operand with the
// output's shape and another of one shape or broadcast over it (numpy rules, rank <= 4).
enum class BinaryOp : int32_t { kAdd = 0, kSub = 1, kMul = 2, kDiv = 3 };
std::string check_binary(const NodeView& node, const Device& device);
void lower_binary(Lowering& lw, const NodeView& node, int32_t index, BinaryOp op);

// MaxPool / AveragePool (mode 0 / 1) on images.
std::string check_pool(const NodeView& node, const Device& device);
void lower_pool(Lowering& lw, const NodeView& node, int32_t index, int32_t mode);

// Global size of a texel-wise kernel over the image of rank-4 `t`.
std::vector<size_t> texel_range(const tsr_tensor& t);

}  // namespace tessera::adreno
