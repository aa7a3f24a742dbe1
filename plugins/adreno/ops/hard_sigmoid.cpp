// HardSigmoid on the adreno plugin: clip(alpha * x + beta, 0, 1) per texel (alpha 0.2 and beta 0.5
// by default; torch's Hardsigmoid exports alpha 1/6).
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device& device) {
  return check_image_io(node, device, /*any_rank=*/true);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_unary(lw, node, index, UnaryOp::kHardSigmoid, node.attr_float("alpha", 0.2f),
              node.attr_float("beta", 0.5f));
}

}  // namespace
TESSERA_ADRENO_OP("HardSigmoid", check, lower);
}  // namespace tessera::adreno
