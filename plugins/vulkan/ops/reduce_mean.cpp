// ReduceMean over adjacent axes (shaders/reduce.comp), accumulated in fp32.
#include "ops/reduce.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_reduce(lowering, node, ReduceOp::kMean);
}

}  // namespace

TESSERA_VULKAN_OP(ReduceMean, check_reduce, lower);

}  // namespace tessera::vulkan
