// Max: max(a, b) (two inputs) with broadcasting (shaders/binary.comp).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  if (node.num_inputs() != 2) return "only the two-input form";
  return check_binary(node);
}

void lower(Lowering& lowering, const NodeView& node) {
  lower_binary(lowering, node, BinaryOp::kMax);
}

}  // namespace

TESSERA_VULKAN_OP(Max, check, lower);

}  // namespace tessera::vulkan
