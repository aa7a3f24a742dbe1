// How a mali op plugs in: one file per op registers an OpLowering with check() (can this node
// run here? "" = yes, else the reason), lower() (turn it into kernel launches) and, for ops with
// NCHW4c kernels, a storage rule (which storage its output gets under the nchw4c activation
// storage; ops without one run on NCHW and have their inputs converted to it, see region.hpp).
#pragma once

#include <string>

#include "region.hpp"
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::mali {

// The mali op table: the NCHW and NCHW4c buffer kernels.
TESSERA_OPENCL_LOWERING_OPS(MaliOpsTag);
using opencl::stored_numel;

#define TESSERA_MALI_OP(op_type, check_fn, lower_fn) \
  TESSERA_OPENCL_PLUGIN_OP(mali, op_type, check_fn, lower_fn, nullptr)
// An op with NCHW4c kernels: `rule` is its StorageRule.
#define TESSERA_MALI_OP_WITH_LAYOUT(op_type, check_fn, lower_fn, rule) \
  TESSERA_OPENCL_PLUGIN_OP(mali, op_type, check_fn, lower_fn, rule)
#define TESSERA_MALI_TUNABLE(op_type, fn) TESSERA_OPENCL_PLUGIN_TUNABLE(mali, op_type, fn)

// ---- helpers shared by the op files ----

// The shared ops' helpers (plugins/opencl/ops/common.hpp).
using opencl::check_alias;
using opencl::follow_input0;
using opencl::lower_alias;
using opencl::lower_strided_copy;
using opencl::normalized_axis;
inline std::string check_float_io(const NodeView& node) {
  return opencl::check_float_io(node, "mali");
}
inline std::string check_float_data_io(const NodeView& node) {
  return opencl::check_float_data_io(node, "mali");
}

// check_constant, constant_floats, to_i32: tessera_opencl/op_registry.hpp.
using opencl::support::check_constant;
using opencl::support::constant_floats;
using opencl::support::to_i32;
// A Config of `schedule_id` with the default value of each knob: wg_x from default_wg_x(), other
// knobs from `overrides` (name, value) or their first candidate.
Config default_config(const std::string& schedule_id, const opencl::DeviceInfo& device,
                      int64_t work_dim0, const opencl::ConfigOverrides& overrides = {});
// Storage rules: the node's output follows input 0's layout (NCHW4c only for rank-4 values; the
// other inputs are read as NCHW), and "always NCHW4c" for rank-4 inputs (unless the padded
// buffers would be too large for 32-bit indexing).
StoragePlan nchw4c_if_rank4(const NodeView& node, const Lowering& lowering);
// Whether the node's output (a value it writes) is stored as NCHW4c.
bool writes_nchw4c(const Lowering& lowering, const NodeView& node);
// The config of a one-schedule node with a `vec` knob over n floats (element-wise, copy): the
// one core requested for node `index` if valid, else default_config's.
Config elementwise_config(const Lowering& lowering, int32_t index, const char* schedule_id,
                          int64_t n);

}  // namespace tessera::mali
