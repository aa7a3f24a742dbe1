// ReduceProd over adjacent axes (shaders/reduce.comp), accumulated in fp32.
#include "ops/reduce.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_reduce(lowering, node, ReduceOp::kProd);
}

}  // namespace

TESSERA_VULKAN_OP(ReduceProd, check_reduce, lower);

}  // namespace tessera::vulkan
