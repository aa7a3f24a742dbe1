// AveragePool (2-D, NCHW) on the mali plugin: one work-item per output; the output size (ceil_mode
// included) comes from the region's inferred shapes.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_pool(lw, node, index, /*mode=*/1);
}

}  // namespace
TESSERA_MALI_OP_WITH_LAYOUT("AveragePool", check_pool, lower, follow_input0);
}  // namespace tessera::mali
