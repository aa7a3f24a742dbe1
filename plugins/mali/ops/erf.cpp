// Erf on the mali plugin (the GELU of transformer and ConvNeXt-style blocks: x * 0.5 * (1 +
// erf(x / sqrt(2)))), element-wise with OpenCL's erf. erf(0) = 0 keeps NCHW4c padding zero.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device&) {
  return check_float_io(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_unary(lw, node, index, UnaryOp::kErf, 0.0f, 0.0f);
}

}  // namespace
TESSERA_MALI_OP_WITH_LAYOUT("Erf", check, lower, follow_input0);
TESSERA_MALI_TUNABLE("Erf", unary_options);
}  // namespace tessera::mali
