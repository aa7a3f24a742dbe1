// Mish, element-wise (shaders/unary.comp, activation.glsl code 22).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 22);
}

}  // namespace

TESSERA_VULKAN_OP(Mish, check_unary, lower);

}  // namespace tessera::vulkan
