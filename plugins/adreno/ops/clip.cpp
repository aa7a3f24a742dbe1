// Clip on the adreno plugin: min/max from attributes (opset < 11) or constant scalar inputs.
#include <limits>

#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device& device) {
  if (!node.has_input(0)) return "input 0 missing";
  for (int32_t i = 1; i < node.num_inputs() && i < 3; ++i) {
    if (!node.has_input(i)) continue;
    const std::string r = check_constant(node, i, i == 1 ? "min" : "max");
    if (!r.empty()) return r;
    if (numel_of(node.input(i)) != 1) return "min/max must be scalars";
  }
  return check_image_io(node, device, /*any_rank=*/true);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  float lo = -std::numeric_limits<float>::max();
  float hi = std::numeric_limits<float>::max();
  if (node.opset() < 11) {
    lo = node.attr_float("min", lo);
    hi = node.attr_float("max", hi);
  } else {
    if (node.has_input(1)) lo = constant_floats(node, 1)[0];
    if (node.num_inputs() > 2 && node.has_input(2)) hi = constant_floats(node, 2)[0];
  }
  lower_unary(lw, node, index, UnaryOp::kClip, lo, hi);
}

}  // namespace
TESSERA_ADRENO_OP("Clip", check, lower);
}  // namespace tessera::adreno
