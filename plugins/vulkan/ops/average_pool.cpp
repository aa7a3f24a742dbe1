// AveragePool (2-D, NCHW; shaders/pool2d.comp).
#include "ops/pool.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_pool(lowering, node, false);
}

}  // namespace

TESSERA_VULKAN_OP(AveragePool, check_pool, lower);

}  // namespace tessera::vulkan
