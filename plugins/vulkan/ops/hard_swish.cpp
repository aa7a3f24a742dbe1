// HardSwish, element-wise (shaders/unary.comp, activation.glsl code 5).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 5);
}

}  // namespace

TESSERA_VULKAN_OP(HardSwish, check_unary, lower);

}  // namespace tessera::vulkan
