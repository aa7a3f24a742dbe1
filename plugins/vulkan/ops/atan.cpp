// Atan, element-wise (shaders/unary.comp, activation.glsl code 27).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 27);
}

}  // namespace

TESSERA_VULKAN_OP(Atan, check_unary, lower);

}  // namespace tessera::vulkan
