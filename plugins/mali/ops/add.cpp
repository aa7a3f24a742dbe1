// Add on the mali plugin: element-wise with numpy broadcasting (up to 4 dims once contiguous
// ones are merged, tessera_opencl/op_registry.hpp).
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_binary(lw, node, index, BinaryOp::kAdd);
}

}  // namespace
TESSERA_MALI_OP_WITH_LAYOUT("Add", check_binary, lower, binary_layout);
TESSERA_MALI_TUNABLE("Add", binary_options);
}  // namespace tessera::mali
