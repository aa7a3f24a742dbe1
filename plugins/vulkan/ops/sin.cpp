// Sin, element-wise (shaders/unary.comp, activation.glsl code 23).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 23);
}

}  // namespace

TESSERA_VULKAN_OP(Sin, check_unary, lower);

}  // namespace tessera::vulkan
