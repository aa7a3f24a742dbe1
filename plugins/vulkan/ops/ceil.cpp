// Ceil, element-wise (shaders/unary.comp, activation.glsl code 16).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 16);
}

}  // namespace

TESSERA_VULKAN_OP(Ceil, check_unary, lower);

}  // namespace tessera::vulkan
