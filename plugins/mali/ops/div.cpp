// Div on the mali plugin: element-wise with numpy broadcasting up to rank 4. Always NCHW: in
// NCHW4c the padded lanes would compute 0 / 0 = NaN, and a later Conv multiplies padding by its
// zero weights (NaN * 0 is NaN).
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_binary(lw, node, index, BinaryOp::kDiv);
}

StoragePlan nchw(const NodeView&, const Lowering&) {
  return {};
}

}  // namespace
TESSERA_MALI_OP_WITH_LAYOUT("Div", check_binary, lower, nchw);
TESSERA_MALI_TUNABLE("Div", binary_options);
}  // namespace tessera::mali
