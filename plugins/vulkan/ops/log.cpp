// Log, element-wise (shaders/unary.comp, activation.glsl code 10).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 10);
}

}  // namespace

TESSERA_VULKAN_OP(Log, check_unary, lower);

}  // namespace tessera::vulkan
