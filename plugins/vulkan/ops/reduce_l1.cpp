// ReduceL1 over adjacent axes (shaders/reduce.comp), accumulated in fp32.
#include "ops/reduce.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_reduce(lowering, node, ReduceOp::kL1);
}

}  // namespace

TESSERA_VULKAN_OP(ReduceL1, check_reduce, lower);

}  // namespace tessera::vulkan
