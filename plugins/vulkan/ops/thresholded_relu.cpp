// ThresholdedRelu, element-wise (shaders/unary.comp, activation.glsl code 32).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 32, node.attr_float("alpha", 1.0f));
}

}  // namespace

TESSERA_VULKAN_OP(ThresholdedRelu, check_unary, lower);

}  // namespace tessera::vulkan
