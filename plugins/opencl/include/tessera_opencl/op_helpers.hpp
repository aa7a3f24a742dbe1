// Helpers the ops of plugins/opencl/ops share (and the plugins' own ops use): float checks,
// buffer aliases, the strided copy and the storage rule of ops that keep their input's storage.
#pragma once

#include <cstdint>
#include <string>

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

// Output `output` = input 0 read with strides (kernels/strided.cl; tessera_opencl/strided.hpp
// computes `copy` for Transpose, Slice, Split, Expand and Gather), on NCHW buffers.
void lower_strided_copy(Lowering& lw, const NodeView& node, int32_t index,
                        const support::StridedCopy& copy, int32_t output = 0);

}  // namespace tessera::opencl

// An op of plugins/opencl/ops whose NCHW4c storage follows `rule` (tessera_opencl/lowering.hpp).
#define TESSERA_OPENCL_OP_WITH_RULE(op_type, check_fn, lower_fn, rule)            \
  static const ::tessera::opencl::SharedOps::LoweringRegistrar TSR_OPENCL_CONCAT( \
      opencl_op_, __LINE__)(::tessera::opencl::OpLowering{op_type, check_fn, lower_fn, rule})
