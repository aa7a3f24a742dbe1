// Lowerings used by several adreno op files: texel-wise unary ops, 2-D pooling, buffer aliases.
#pragma once

#include "ops/op.hpp"

namespace tessera::adreno {

// Codes of unary_image in kernels/elementwise.cl.
enum class UnaryOp : int32_t { kRelu = 0, kClip = 1 };
void lower_unary(Lowering& lw, const NodeView& node, int32_t index, UnaryOp op, float a, float b);

// MaxPool / AveragePool (mode 0 / 1) on images.
std::string check_pool(const NodeView& node, const Device& device);
void lower_pool(Lowering& lw, const NodeView& node, int32_t index, int32_t mode);

// Flatten / Reshape: the output shares the input's NCHW buffer (an image input is converted to a
// buffer first: the texture layout is 4-D only).
std::string check_alias(const NodeView& node, const Device& device);
void lower_alias(Lowering& lw, const NodeView& node, int32_t index);

// Global size of a texel-wise kernel over the image of rank-4 `t`.
std::vector<size_t> texel_range(const tsr_tensor& t);

}  // namespace tessera::adreno
