// Sub on the mali plugin: element-wise with numpy broadcasting up to rank 4 (NCHW4c where both
// inputs have the output's shape: 0 - 0 keeps the padding zero).
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_binary(lw, node, index, BinaryOp::kSub);
}

}  // namespace
TESSERA_MALI_OP_WITH_LAYOUT("Sub", check_binary, lower, binary_layout);
TESSERA_MALI_TUNABLE("Sub", binary_options);
}  // namespace tessera::mali
