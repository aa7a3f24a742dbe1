// Sign, element-wise (shaders/unary.comp, activation.glsl code 28).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 28);
}

}  // namespace

TESSERA_VULKAN_OP(Sign, check_unary, lower);

}  // namespace tessera::vulkan
