// Tanh, element-wise (shaders/unary.comp, activation.glsl code 7).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 7);
}

}  // namespace

TESSERA_VULKAN_OP(Tanh, check_unary, lower);

}  // namespace tessera::vulkan
