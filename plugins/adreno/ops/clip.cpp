// Clip on the adreno plugin: min/max from attributes (opset < 11) or constant scalar inputs.
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device& device) {
  const std::string r = opencl::support::check_clip_bounds(node);
  if (!r.empty()) return r;
  return check_image_io(node, device, /*any_rank=*/true);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const auto [lo, hi] = opencl::support::clip_bounds(node);
  lower_unary(lw, node, index, UnaryOp::kClip, lo, hi);
}

}  // namespace
TESSERA_ADRENO_OP("Clip", check, lower);
}  // namespace tessera::adreno
