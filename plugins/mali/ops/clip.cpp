// Clip on the mali plugin: min/max from attributes (opset < 11) or constant inputs (opset 11+).
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device&) {
  const std::string r = opencl::support::check_clip_bounds(node);
  if (!r.empty()) return r;
  return check_float_io(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const auto [lo, hi] = opencl::support::clip_bounds(node);
  lower_unary(lw, node, index, UnaryOp::kClip, lo, hi);
}

}  // namespace
TESSERA_MALI_OP_WITH_LAYOUT("Clip", check, lower, follow_input0);
TESSERA_MALI_TUNABLE("Clip", unary_options);
}  // namespace tessera::mali
