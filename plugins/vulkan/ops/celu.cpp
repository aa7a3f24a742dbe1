// Celu, element-wise (shaders/unary.comp, activation.glsl code 31).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 31, node.attr_float("alpha", 1.0f));
}

}  // namespace

TESSERA_VULKAN_OP(Celu, check_unary, lower);

}  // namespace tessera::vulkan
