// Cos, element-wise (shaders/unary.comp, activation.glsl code 24).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 24);
}

}  // namespace

TESSERA_VULKAN_OP(Cos, check_unary, lower);

}  // namespace tessera::vulkan
