// GlobalMaxPool: a reduction over each plane of NCHW (shaders/reduce.comp).
#include "ops/reduce.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  if (node.input(0)->rank < 3) return "needs rank 3 or more";
  return float_only(node);
}

void lower(Lowering& lowering, const NodeView& node) {
  const tsr_tensor& x = *node.input(0);
  int64_t plane = 1;
  for (int32_t i = 2; i < x.rank; ++i) plane *= x.dims[i];
  dispatch_reduce(lowering, node, ReduceOp::kMax, x.dims[0] * x.dims[1], plane, 1);
}

}  // namespace

TESSERA_VULKAN_OP(GlobalMaxPool, check, lower);

}  // namespace tessera::vulkan
