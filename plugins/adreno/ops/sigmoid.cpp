// Sigmoid on the adreno plugin: 1 / (1 + exp(-x)) per texel (rank <= 4, in the texture layout of
// the 4-D view).
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device& device) {
  return check_image_io(node, device, /*any_rank=*/true);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_unary(lw, node, index, UnaryOp::kSigmoid, 0.0f, 0.0f);
}

}  // namespace
TESSERA_ADRENO_OP("Sigmoid", check, lower);
}  // namespace tessera::adreno
