// LeakyRelu, element-wise (shaders/unary.comp, activation.glsl code 6).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 6, node.attr_float("alpha", 0.01f), 0.0f);
}

}  // namespace

TESSERA_VULKAN_OP(LeakyRelu, check_unary, lower);

}  // namespace tessera::vulkan
