// Sigmoid on the mali plugin: 1 / (1 + exp(-x)), element-wise.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device&) {
  return check_float_io(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_unary(lw, node, index, UnaryOp::kSigmoid, 0.0f, 0.0f);
}

}  // namespace
TESSERA_MALI_OP_WITH_LAYOUT("Sigmoid", check, lower, follow_input0);
TESSERA_MALI_TUNABLE("Sigmoid", unary_options);
}  // namespace tessera::mali
