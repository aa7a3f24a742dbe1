// Round, element-wise (shaders/unary.comp, activation.glsl code 29).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 29);
}

}  // namespace

TESSERA_VULKAN_OP(Round, check_unary, lower);

}  // namespace tessera::vulkan
