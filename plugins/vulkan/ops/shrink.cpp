// Shrink, element-wise (shaders/unary.comp, activation.glsl code 33).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 33, node.attr_float("lambd", 0.5f), node.attr_float("bias", 0.0f));
}

}  // namespace

TESSERA_VULKAN_OP(Shrink, check_unary, lower);

}  // namespace tessera::vulkan
