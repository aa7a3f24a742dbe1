// How a mali op plugs in: one file per op registers an OpLowering with check() (can this node
// run here? "" = yes, else the reason), lower() (turn it into kernel launches) and, for ops with
// NCHW4c kernels, a layout rule (which layout its output gets under the nchw4c region layout;
// ops without one run on NCHW and have their inputs converted to it, see region.hpp).
#pragma once

#include <string>

#include "region.hpp"
#include "tessera_opencl/op_registry.hpp"

namespace tessera::mali {

// The layout a node runs in under the nchw4c region layout, from its inputs' layouts.
using LayoutRule = LayoutPlan (*)(const NodeView& node, const Lowering& lowering);

// lower() as the shared compile loop calls it: the node's layout plan is applied first.
struct LowerFn {
  void (*fn)(Lowering& lowering, const NodeView& node, int32_t node_index);
  LayoutRule layout_rule;
  void operator()(Lowering& lowering, const NodeView& node, int32_t node_index) const {
    const bool rule = layout_rule && lowering.region_layout() == Layout::kNchw4c;
    lowering.begin_node(node, node_index, rule ? layout_rule(node, lowering) : LayoutPlan{});
    if (!lowering.fused(node_index)) fn(lowering, node, node_index);
  }
};

struct OpLowering {
  const char* op_type;
  std::string (*check)(const NodeView& node, const opencl::DeviceInfo& device);
  LowerFn lower;
};

// The configs a node can run with, the heuristic's first; one per schedule (ops with more than
// one way to run register them).
using TuningOptionsFn = std::vector<Config> (*)(const NodeView& node,
                                                const opencl::DeviceInfo& device);

// The op tables, their lookups and choose_config: tessera_opencl/op_registry.hpp.
TESSERA_OPENCL_OP_REGISTRY(OpLowering, TuningOptionsFn);

#define TSR_MALI_CONCAT_INNER(a, b) a##b
#define TSR_MALI_CONCAT(a, b) TSR_MALI_CONCAT_INNER(a, b)
#define TESSERA_MALI_OP(op_type, check_fn, lower_fn) \
  TESSERA_MALI_OP_WITH_LAYOUT(op_type, check_fn, lower_fn, nullptr)
// An op with NCHW4c kernels: `rule` is its LayoutRule.
#define TESSERA_MALI_OP_WITH_LAYOUT(op_type, check_fn, lower_fn, rule)                   \
  static const ::tessera::mali::OpLoweringRegistrar TSR_MALI_CONCAT(mali_op_, __LINE__)( \
      ::tessera::mali::OpLowering{op_type, check_fn, ::tessera::mali::LowerFn{lower_fn, rule}})

#define TESSERA_MALI_TUNABLE(op_type, fn)                                                         \
  static const ::tessera::mali::TuningRegistrar TSR_MALI_CONCAT(mali_tunable_, __LINE__)(op_type, \
                                                                                         fn)

// ---- helpers shared by the op files ----

// "" when every present input and output i is float32 with a known shape; else the reason.
std::string check_float_io(const NodeView& node);
// check_constant, constant_floats, to_i32: tessera_opencl/op_registry.hpp.
using opencl::support::check_constant;
using opencl::support::constant_floats;
using opencl::support::to_i32;
// A Config of `schedule_id` with the default value of each knob: wg_x from default_wg_x(), other
// knobs from `overrides` (name, value) or their first candidate.
Config default_config(const std::string& schedule_id, const opencl::DeviceInfo& device,
                      int64_t work_dim0,
                      const std::vector<std::pair<const char*, int32_t>>& overrides = {});
// Layout rules: the node's output follows input 0's layout (NCHW4c only for rank-4 values; the
// other inputs are read as NCHW), and "always NCHW4c" for rank-4 inputs (unless the padded
// buffers would be too large for 32-bit indexing).
LayoutPlan follow_input0(const NodeView& node, const Lowering& lowering);
LayoutPlan nchw4c_if_rank4(const NodeView& node, const Lowering& lowering);
// Whether the node's output (a value it writes) is stored as NCHW4c.
bool writes_nchw4c(const Lowering& lowering, const NodeView& node);
// The config of a one-schedule node with a `vec` knob over n floats (element-wise, copy): the
// one core requested for node `index` if valid, else default_config's.
Config elementwise_config(const Lowering& lowering, int32_t index, const char* schedule_id,
                          int64_t n);
// check_float_io for ops whose other inputs are integer parameters (axes, starts, ...): input 0
// and output 0 float32, no optional outputs.
std::string check_float_data_io(const NodeView& node);
// The node's `axis` attribute (`fallback` when absent) made non-negative against input 0's rank;
// it may still be out of range (callers check).
inline int64_t normalized_axis(const NodeView& node, int64_t fallback) {
  const int64_t axis = node.attr_int("axis", fallback);
  return axis < 0 ? axis + node.input(0).rank : axis;
}
// Element-wise launch over n items (n floats, ceil(n / vec) work-items when the schedule has a
// `vec` knob) with the config's wg_x.
void add_1d_step(Lowering& lowering, int32_t node, opencl::Kernel kernel, int64_t n,
                 const Config& config);

}  // namespace tessera::mali
