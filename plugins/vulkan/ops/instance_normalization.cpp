// InstanceNormalization: each (sample, channel) normalised over its spatial values, scale and
// bias per channel (ops/norm.cpp).
#include "ops/norm.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  const tsr_tensor* x = node.input(0);
  return check_norm(node, x != nullptr && x->rank >= 2 ? x->dims[1] : -1);
}

void lower(Lowering& lowering, const NodeView& node) {
  const tsr_tensor& x = *node.input(0);
  const int64_t c = x.dims[1];
  const int64_t spatial = c * x.dims[0] == 0 ? 0 : plugin::tensor_numel(x) / (x.dims[0] * c);
  lower_norm(lowering, node, c, spatial, c);
}

}  // namespace

TESSERA_VULKAN_OP(InstanceNormalization, check, lower);

}  // namespace tessera::vulkan
