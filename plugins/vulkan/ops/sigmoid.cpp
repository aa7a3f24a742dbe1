// Sigmoid, element-wise (shaders/unary.comp, activation.glsl code 3).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 3);
}

}  // namespace

TESSERA_VULKAN_OP(Sigmoid, check_unary, lower);

}  // namespace tessera::vulkan
