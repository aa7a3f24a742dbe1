// Gelu (opset 20), exact (erf) form only, element-wise (shaders/unary.comp).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  if (node.attr_string("approximate", "none") != "none") return "only approximate='none'";
  return check_unary(node);
}

void lower(Lowering& lowering, const NodeView& node) {
  lower_unary(lowering, node, 19);
}

}  // namespace

TESSERA_VULKAN_OP(Gelu, check, lower);

}  // namespace tessera::vulkan
