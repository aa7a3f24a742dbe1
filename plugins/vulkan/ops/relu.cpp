// Relu, element-wise (shaders/unary.comp, activation.glsl code 1).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 1);
}

}  // namespace

TESSERA_VULKAN_OP(Relu, check_unary, lower);

}  // namespace tessera::vulkan
