// ReduceL2 over adjacent axes (shaders/reduce.comp), accumulated in fp32.
#include "ops/reduce.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_reduce(lowering, node, ReduceOp::kL2);
}

}  // namespace

TESSERA_VULKAN_OP(ReduceL2, check_reduce, lower);

}  // namespace tessera::vulkan
