// Div on the adreno plugin: x / y, for same-shape operands texel by texel, or one operand
// broadcast over the other (read from an NCHW buffer with zero strides; shared.cpp).
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_binary(lw, node, index, BinaryOp::kDiv);
}

}  // namespace
TESSERA_ADRENO_OP("Div", check_binary, lower);
}  // namespace tessera::adreno
