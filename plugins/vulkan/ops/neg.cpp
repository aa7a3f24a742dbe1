// Neg, element-wise (shaders/unary.comp, activation.glsl code 12).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 12);
}

}  // namespace

TESSERA_VULKAN_OP(Neg, check_unary, lower);

}  // namespace tessera::vulkan
