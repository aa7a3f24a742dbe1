// AveragePool (2-D) on the adreno plugin: one work-item per output texel (4 channels); the output
// size (ceil_mode included) comes from the region's inferred shapes.
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_pool(lw, node, index, /*mode=*/1);
}

}  // namespace
TESSERA_ADRENO_OP("AveragePool", check_pool, lower);
}  // namespace tessera::adreno
