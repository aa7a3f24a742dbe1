// PRelu: x >= 0 ? x : slope * x with broadcasting (shaders/binary.comp).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_binary(lowering, node, BinaryOp::kPRelu);
}

}  // namespace

TESSERA_VULKAN_OP(PRelu, check_binary, lower);

}  // namespace tessera::vulkan
