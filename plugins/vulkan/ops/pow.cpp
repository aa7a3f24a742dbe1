// Pow: a ^ b with broadcasting (shaders/binary.comp).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_binary(lowering, node, BinaryOp::kPow);
}

}  // namespace

TESSERA_VULKAN_OP(Pow, check_binary, lower);

}  // namespace tessera::vulkan
