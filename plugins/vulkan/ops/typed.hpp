// Values that are not float32 on the device (shaders/typed.glsl): the checks and lowerings the
// op files of comparisons, logic, Where, Cast, ArgMax/ArgMin and integer arithmetic share, so
// masks, indices and shape arithmetic stay in device memory instead of bouncing through the host.
#pragma once

#include <string>

#include "ops/op.hpp"

namespace tessera::vulkan {

// "" when every present input and output of `node` has a dtype kept on the device (float32,
// int64, int32, int8, uint8, bool) and fits 32-bit shader indexing, else why not.
std::string check_values(const NodeView& node);
// check_values, and output 0 has input 0's dtype: the ops that move or alias elements
// (Reshape, Transpose, Slice, Concat, ...).
std::string check_movable(const NodeView& node);

// Whether lowering `node` uses a shader computing in int64_t (cast, compare, int_binary,
// arg_reduce), which needs the device's shaderInt64.
bool needs_int64(const NodeView& node);
// Throws Failure(TSR_UNSUPPORTED) naming the node when the device lacks shaderInt64.
void require_int64(Lowering& lowering, const NodeView& node);

// Comparison and logic op codes of shaders/compare.comp.
enum class CompareOp {
  kEqual = 0,
  kLess = 1,
  kLessOrEqual = 2,
  kGreater = 3,
  kGreaterOrEqual = 4,
  kAnd = 5,
  kOr = 6,
  kXor = 7,
  kNot = 8
};
// "" when `node` (two operands of one dtype, or one for Not; bool output) can run as `op`.
std::string check_compare(const NodeView& node, CompareOp op);
void lower_compare(Lowering& lowering, const NodeView& node, CompareOp op);

// The shaders/int_binary.comp code of node's op type (Add 0 ... Min 5), -1 for other ops.
int32_t integer_binary_op(const NodeView& node);
// "" when an integer Add/Sub/Mul/Div/Max/Min can run: int64, int32, int8 or uint8 operands of the
// output's dtype, rank <= 6, and for Div a constant divisor without zeros (the shader cannot
// raise core's "integer division by zero").
std::string check_integer_binary(const NodeView& node);
void lower_integer_binary(Lowering& lowering, const NodeView& node);

// ArgMax/ArgMin of float32, int64 or int32 input to int64 indices (keepdims,
// select_last_index; a NaN wins as in core's util/arg_extreme.hpp).
std::string check_arg_reduce(const NodeView& node);
void lower_arg_reduce(Lowering& lowering, const NodeView& node, bool is_max);

}  // namespace tessera::vulkan
