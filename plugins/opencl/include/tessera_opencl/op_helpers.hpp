// Helpers the ops of plugins/opencl/ops share (and the plugins' own ops use): float checks,
// buffer aliases, the strided copy and the storage rule of ops that keep their input's storage.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "tessera_opencl/lowering.hpp"
#include "tessera_opencl/strided.hpp"

namespace tessera::opencl {

using support::check_constant;
using support::choose_config;
using support::constant_floats;
using support::to_i32;

// "" when every present input and output is float32 with a known shape small enough for 32-bit
// indexing, output 0 is present and no optional output is used; else the reason. `plugin` names
// the plugin in the reason.
std::string check_float_io(const NodeView& node, const char* plugin);
// check_float_io for ops whose other inputs are integer parameters (axes, starts, ...): input 0
// and output 0 float32, no optional outputs.
std::string check_float_data_io(const NodeView& node, const char* plugin);

// The node's `axis` attribute (`fallback` when absent) made non-negative against input 0's rank;
// it may still be out of range (callers check).
inline int64_t normalized_axis(const NodeView& node, int64_t fallback) {
  const int64_t axis = node.attr_int("axis", fallback);
  return axis < 0 ? axis + node.input(0).rank : axis;
}

// Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout, a Cast to the same type: output 0
// shares the memory input 0 is read from (support::check_alias says when it can).
std::string check_alias(const NodeView& node, const Device& device);
void lower_alias(Lowering& lw, const NodeView& node, int32_t index);

// The storage rule of ops that run on any storage of their input 0 (a rank-4 input in NCHW4c
// keeps it; the other inputs are read as NCHW).
StoragePlan follow_input0(const NodeView& node, const Lowering& lowering);

// The build defines of a kernel that moves elements of `t`'s dtype without reading them
// (TSR_ELEM of kernels/common/strided.cl): empty for float32, else an unsigned type of the
// element's size.
std::string element_defines(const tsr_tensor& t);

// Output `output` = input 0 read with strides (kernels/strided.cl; tessera_opencl/strided.hpp
// computes `copy` for Transpose, Slice, Split, Expand and Gather), on NCHW buffers, any dtype
// device memory holds.
void lower_strided_copy(Lowering& lw, const NodeView& node, int32_t index,
                        const support::StridedCopy& copy, int32_t output = 0);

// A strided copy of the output seen as 6-D `dims`, reading the input at `strides` per axis.
support::StridedCopy strided_copy_6d(const NodeView& node, const std::array<int64_t, 6>& dims,
                                     const std::array<int64_t, 6>& strides);

// ---- element-wise and reductions on NCHW buffers of any rank (the generic kernels every
// plugin has; a plugin's own ops run the storage-specific ones first) ----

// Codes of unary_any_f32 (kernels/unary.cl).
enum class UnaryCode : int32_t {
  kSqrt = 0,
  kReciprocal = 1,
  kExp = 2,
  kLog = 3,
  kNeg = 4,
  kAbs = 5,
  kFloor = 6,
  kCeil = 7,
  kSoftplus = 8,
  kElu = 9,
  kSin = 10,
  kCos = 11,
  kTanh = 12,
  kLeakyRelu = 13,
  kSign = 14,
  kRound = 15,
  kSelu = 16,
  kCelu = 17,
  kSoftsign = 18,
  kGelu = 19,
  kGeluTanh = 20,
  kMish = 21,
  kThresholdedRelu = 22,
  kTan = 23,
  kAtan = 24,
  kShrink = 25,
  kAsin = 26,
  kAcos = 27,
  kSinh = 28,
  kCosh = 29
};
// One float input and output of the same element count.
std::string check_unary_any(const NodeView& node, const Device& device);
// y = f(x) with f's parameters `a` and `b` (alpha, gamma, ...).
void lower_unary_any(Lowering& lw, const NodeView& node, int32_t index, UnaryCode code,
                     float a = 0.0f, float b = 0.0f);

// Codes of binary_strided_f32 (kernels/binary.cl).
enum class BinaryCode : int32_t {
  kAdd = 0,
  kSub = 1,
  kMul = 2,
  kDiv = 3,
  kPow = 4,
  kMax = 5,
  kMin = 6,
  kPRelu = 7
};
// Two float inputs broadcasting (numpy rules) to the output in at most 4 dims once contiguous
// dims merge; for Add, Sub, Mul, Div, Max and Min also two int64 or int32 inputs of rank <= 6
// (shape and index arithmetic, kernels/binary.cl binary_strided_int).
std::string check_binary_strided(const NodeView& node, const Device& device);
void lower_binary_strided(Lowering& lw, const NodeView& node, int32_t index, BinaryCode code);
// Sum, Mean, Max and Min of any number of float inputs broadcasting to the output (two inputs of
// Sum, Max and Min: check_binary_strided's rules, integers included): `code` folds the inputs
// into the output one by one; Mean then scales by 1 / count.
std::string check_variadic(const NodeView& node, const Device& device);
void lower_variadic(Lowering& lw, const NodeView& node, int32_t index, BinaryCode code);

// ---- values that are not float32: masks, indices, shape arithmetic ----

// The OpenCL C type of a dtype device memory holds (float, long, int, char, uchar for bool and
// uint8); throws for any other.
const char* opencl_c_type(int32_t dtype);

// "" when output 0 and every input have dtypes device memory holds, the output rank <= 6 and
// each input broadcasts to it (numpy rules); no optional outputs.
std::string check_broadcast_operands(const NodeView& node);

// Codes of compare_strided (kernels/compare.cl).
enum class CompareCode : int32_t {
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
// A comparison of two operands of one dtype (float32, int64, int32, bool for Equal), or a
// logical op of bool operands (Not: one), to a bool output of rank <= 6.
std::string check_compare(const NodeView& node, const Device& device);
void lower_compare(Lowering& lw, const NodeView& node, int32_t index, CompareCode code);

// `t` seen as [outer, dims[axis], inner]: the products of the dims before and after `axis`.
std::pair<int64_t, int64_t> outer_inner(const tsr_tensor& t, int64_t axis);

// IsNaN (is_inf false) or IsInf (detect_positive / detect_negative) of float32, to bool.
std::string check_classify(const NodeView& node, const Device& device);
void lower_classify(Lowering& lw, const NodeView& node, int32_t index, bool is_inf);

// ArgMax / ArgMin of a float32, int64 or int32 tensor along one axis, to int64.
std::string check_arg_reduce(const NodeView& node, const Device& device);
void lower_arg_reduce(Lowering& lw, const NodeView& node, int32_t index, bool is_max);

// Codes of reduce_axes_f32 (kernels/reduce.cl).
enum class ReduceCode : int32_t {
  kSum = 0,
  kMean = 1,
  kMax = 2,
  kMin = 3,
  kProd = 4,
  kSumSquare = 5,
  kL1 = 6,
  kLogSumExp = 7,
  kLogSum = 8
};
// A Reduce* node over constant axes (attribute or input; every axis when absent unless
// noop_with_empty_axes) of a float tensor of rank <= 8.
std::string check_reduce_axes(const NodeView& node, const Device& device);
void lower_reduce_axes(Lowering& lw, const NodeView& node, int32_t index, ReduceCode code);
// The schedules of such a node, the default first: one work-item per output (reduce.axes), or a
// work-group per output (reduce.axes.group) first on a GPU when the outputs are too few to fill
// it and each folds at least 256 elements.
std::vector<Config> reduce_axes_options(const NodeView& node, const Device& device);
std::vector<Config> reduce_over_options(const NodeView& node, const Device& device,
                                        const std::vector<int64_t>& axes);
// The same over `axes` (sorted, non-negative) of input 0, whatever the node's attributes.
void lower_reduce_over(Lowering& lw, const NodeView& node, int32_t index, ReduceCode code,
                       const std::vector<int64_t>& axes);

}  // namespace tessera::opencl

// An op of plugins/opencl/ops whose NCHW4c storage follows `rule` (tessera_opencl/lowering.hpp).
#define TESSERA_OPENCL_OP_WITH_RULE(op_type, check_fn, lower_fn, rule)            \
  static const ::tessera::opencl::SharedOps::LoweringRegistrar TSR_OPENCL_CONCAT( \
      opencl_op_, __LINE__)(::tessera::opencl::OpLowering{op_type, check_fn, lower_fn, rule})
