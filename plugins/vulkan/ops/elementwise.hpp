// Shared lowering of the element-wise ops (one op per file: add.cpp, relu.cpp, ...).
#pragma once

#include <string>

#include "ops/op.hpp"

namespace tessera::vulkan {

// Binary op codes of shaders/binary.comp.
enum class BinaryOp {
  kAdd = 0,
  kSub = 1,
  kMul = 2,
  kDiv = 3,
  kMax = 4,
  kMin = 5,
  kPow = 6,
  kPRelu = 7
};

// "" when a binary node broadcasts within rank 6 on float32, else why not.
std::string check_binary(const NodeView& node);
// out = a OP b with broadcasting, then an activation fused from the sole reader when it is one.
void lower_binary(Lowering& lowering, const NodeView& node, BinaryOp op);

// "" when a Sum/Mean/Max/Min node of any number (>= 1) of float32 inputs broadcasts within rank
// 6, else why not. Two-input Max/Min of integers go through check_binary instead.
std::string check_variadic(const NodeView& node);
// Sum/Mean/Max/Min (`op` kAdd, kAdd, kMax, kMin) of any number of broadcasting inputs: the first
// pair written to the output, each later input folded into it in place (element i is read and
// written by the same invocation, and region.cpp puts a barrier between the steps), Mean then
// scaled by 1/n. No scratch buffer, and the order ((a + b) + c) is core's.
void lower_variadic(Lowering& lowering, const NodeView& node, BinaryOp op);
// "" when a unary node is float32, else why not.
std::string check_unary(const NodeView& node);
// out = f(x) with activation.glsl's `code` and parameters.
void lower_unary(Lowering& lowering, const NodeView& node, int32_t code, float a = 0.0f,
                 float b = 0.0f);

// `v` (a shape or strides of rank <= 6) padded at the front with `fill` to rank 6, as the
// shaders' specialization constants.
std::vector<int32_t> rank6(const std::vector<int64_t>& v, int64_t fill, const NodeView& node);
// Row-major strides of `shape`.
std::vector<int64_t> dense_strides(const std::vector<int64_t>& shape);
// Strides reading a tensor of `shape` broadcast to `out` (rank(out) >= rank(shape), aligned at
// the right; 0 along broadcast dimensions).
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& shape,
                                       const std::vector<int64_t>& out);
// A strided copy (shaders/copy_strided.comp; copy_raw.comp when input 0 is not float32) of
// `dims` (rank <= 6) from `src` to `dst`.
void strided_copy(Lowering& lowering, const NodeView& node, const Buffer& src, const Buffer& dst,
                  const std::vector<int64_t>& dims, const std::vector<int64_t>& src_strides,
                  int64_t src_offset, const std::vector<int64_t>& dst_strides, int64_t dst_offset);

}  // namespace tessera::vulkan
