// Elu, element-wise (shaders/unary.comp, activation.glsl code 8).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 8, node.attr_float("alpha", 1.0f), 0.0f);
}

}  // namespace

TESSERA_VULKAN_OP(Elu, check_unary, lower);

}  // namespace tessera::vulkan
