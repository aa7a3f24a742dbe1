// ReduceMean over every spatial axis on the mali plugin: a global average pool as exporters write
// it (torch's dynamo exporter turns AdaptiveAvgPool2d(1) and x.mean((2, 3)) into it). The axes
// come from the attribute (opset < 18) or a constant input (opset 18); anything else (another set
// of axes, axes computed at run time) is refused with the reason. keepdims=1 follows the input's
// layout as GlobalAveragePool does; keepdims=0 ([N, C]) is written in NCHW.
#include <optional>

#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

using opencl::support::reduced_axes;

std::string check(const NodeView& node, const opencl::DeviceInfo&) {
  const std::string io = check_float_data_io(node);
  if (!io.empty()) return io;
  const int32_t rank = node.input(0).rank;
  if (rank < 3) return "input must have spatial dims";
  std::string why;
  const std::optional<std::vector<int64_t>> axes = reduced_axes(node, &why);
  if (!axes) return why;
  std::vector<int64_t> spatial;
  for (int64_t d = 2; d < rank; ++d) spatial.push_back(d);
  if (*axes != spatial) {
    return "only a mean over every spatial axis (2.." + std::to_string(rank - 1) +
           ") is implemented";
  }
  return "";
}

LayoutPlan layout(const NodeView& node, const Lowering& lw) {
  if (node.attr_int("keepdims", 1) == 0) return {};
  return follow_input0(node, lw);
}

}  // namespace
TESSERA_MALI_OP_WITH_LAYOUT("ReduceMean", check, lower_global_average, layout);
TESSERA_MALI_TUNABLE("ReduceMean", global_average_options);
}  // namespace tessera::mali
