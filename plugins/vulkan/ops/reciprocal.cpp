// Reciprocal, element-wise (shaders/unary.comp, activation.glsl code 17).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 17);
}

}  // namespace

TESSERA_VULKAN_OP(Reciprocal, check_unary, lower);

}  // namespace tessera::vulkan
