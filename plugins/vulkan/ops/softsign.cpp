// Softsign, element-wise (shaders/unary.comp, activation.glsl code 30).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 30);
}

}  // namespace

TESSERA_VULKAN_OP(Softsign, check_unary, lower);

}  // namespace tessera::vulkan
