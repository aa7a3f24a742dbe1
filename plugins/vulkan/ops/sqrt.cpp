// Sqrt, element-wise (shaders/unary.comp, activation.glsl code 11).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 11);
}

}  // namespace

TESSERA_VULKAN_OP(Sqrt, check_unary, lower);

}  // namespace tessera::vulkan
