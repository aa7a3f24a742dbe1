// Floor, element-wise (shaders/unary.comp, activation.glsl code 15).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 15);
}

}  // namespace

TESSERA_VULKAN_OP(Floor, check_unary, lower);

}  // namespace tessera::vulkan
