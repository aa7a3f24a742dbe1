// Erf, element-wise (shaders/unary.comp, activation.glsl code 14).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 14);
}

}  // namespace

TESSERA_VULKAN_OP(Erf, check_unary, lower);

}  // namespace tessera::vulkan
