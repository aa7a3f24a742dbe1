// ReduceMean over every spatial axis on the mali plugin: a global average pool as exporters write
// it (torch's dynamo exporter turns AdaptiveAvgPool2d(1) and x.mean((2, 3)) into it). The axes
// come from the attribute (opset < 18) or a constant input (opset 18); anything else (another set
// of axes, axes computed at run time) is refused with the reason. keepdims=1 follows the input's
// layout as GlobalAveragePool does; keepdims=0 ([N, C]) is written in NCHW.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device&) {
  const std::string io = check_float_data_io(node);
  if (!io.empty()) return io;
  return opencl::support::check_mean_over_spatial_axes(node);
}

StoragePlan layout(const NodeView& node, const Lowering& lw) {
  if (node.attr_int("keepdims", 1) == 0) return {};
  return follow_input0(node, lw);
}

}  // namespace
TESSERA_MALI_OP_WITH_LAYOUT("ReduceMean", check, lower_global_average, layout);
TESSERA_MALI_TUNABLE("ReduceMean", global_average_options);
}  // namespace tessera::mali
