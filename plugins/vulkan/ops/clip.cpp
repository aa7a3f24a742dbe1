// Clip with constant bounds (inputs from opset 11, attributes before), element-wise.
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  if (activation_of(node).code == 0) return "bounds must be float32 constants";
  return check_unary(node);
}

void lower(Lowering& lowering, const NodeView& node) {
  const Activation a = activation_of(node);
  lower_unary(lowering, node, a.code, a.a, a.b);
}

}  // namespace

TESSERA_VULKAN_OP(Clip, check, lower);

}  // namespace tessera::vulkan
