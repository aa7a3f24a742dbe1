// Mul on the adreno plugin: x * y (the squeeze-excitation scale when y is [N, C, 1, 1]), for
// same-shape operands texel by texel, or one operand broadcast over the other (read from an NCHW
// buffer with zero strides; shared.cpp).
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_binary(lw, node, index, BinaryOp::kMul);
}

}  // namespace
TESSERA_ADRENO_OP("Mul", check_binary, lower);
}  // namespace tessera::adreno
