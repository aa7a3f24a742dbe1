// Selu, element-wise (shaders/unary.comp, activation.glsl code 25).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 25, node.attr_float("alpha", 1.67326319217681884765625f),
              node.attr_float("gamma", 1.05070102214813232421875f));
}

}  // namespace

TESSERA_VULKAN_OP(Selu, check_unary, lower);

}  // namespace tessera::vulkan
