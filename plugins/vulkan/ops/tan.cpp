// Tan, element-wise (shaders/unary.comp, activation.glsl code 26).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 26);
}

}  // namespace

TESSERA_VULKAN_OP(Tan, check_unary, lower);

}  // namespace tessera::vulkan
