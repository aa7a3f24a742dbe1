// HardSigmoid, element-wise (shaders/unary.comp, activation.glsl code 4).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 4, node.attr_float("alpha", 0.2f), node.attr_float("beta", 0.5f));
}

}  // namespace

TESSERA_VULKAN_OP(HardSigmoid, check_unary, lower);

}  // namespace tessera::vulkan
