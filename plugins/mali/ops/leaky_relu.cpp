// LeakyRelu on the mali plugin: x or alpha * x, element-wise.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device&) {
  return check_float_io(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_unary(lw, node, index, UnaryOp::kLeakyRelu, node.attr_float("alpha", 0.01f), 0.0f);
}

}  // namespace
TESSERA_MALI_OP_WITH_LAYOUT("LeakyRelu", check, lower, follow_input0);
TESSERA_MALI_TUNABLE("LeakyRelu", unary_options);
}  // namespace tessera::mali
