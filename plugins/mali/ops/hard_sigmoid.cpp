// HardSigmoid on the mali plugin: clamp(alpha * x + beta, 0, 1), element-wise (mobilenet_v3's
// squeeze-excitation gate).
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device&) {
  return check_float_io(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_unary(lw, node, index, UnaryOp::kHardSigmoid, node.attr_float("alpha", 0.2f),
              node.attr_float("beta", 0.5f));
}

}  // namespace
TESSERA_MALI_OP_WITH_LAYOUT("HardSigmoid", check, lower, follow_input0);
TESSERA_MALI_TUNABLE("HardSigmoid", unary_options);
}  // namespace tessera::mali
