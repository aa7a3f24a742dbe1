// Mul on the mali plugin: element-wise with numpy broadcasting up to rank 4.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_binary(lw, node, index, BinaryOp::kMul);
}

}  // namespace
TESSERA_MALI_OP_WITH_LAYOUT("Mul", check_binary, lower, binary_layout);
TESSERA_MALI_TUNABLE("Mul", binary_options);
}  // namespace tessera::mali
