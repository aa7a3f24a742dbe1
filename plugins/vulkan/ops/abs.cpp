// Abs, element-wise (shaders/unary.comp, activation.glsl code 13).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 13);
}

}  // namespace

TESSERA_VULKAN_OP(Abs, check_unary, lower);

}  // namespace tessera::vulkan
