// ReduceSum over adjacent axes (shaders/reduce.comp), accumulated in fp32.
#include "ops/reduce.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_reduce(lowering, node, ReduceOp::kSum);
}

}  // namespace

TESSERA_VULKAN_OP(ReduceSum, check_reduce, lower);

}  // namespace tessera::vulkan
