// Softplus, element-wise (shaders/unary.comp, activation.glsl code 20).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 20);
}

}  // namespace

TESSERA_VULKAN_OP(Softplus, check_unary, lower);

}  // namespace tessera::vulkan
