// Exp, element-wise (shaders/unary.comp, activation.glsl code 9).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 9);
}

}  // namespace

TESSERA_VULKAN_OP(Exp, check_unary, lower);

}  // namespace tessera::vulkan
