// GroupNormalization (opset 18: scale and bias per group; opset 21: per channel): each (sample,
// group) normalised over its C / num_groups channels (ops/norm.cpp).
#include "ops/norm.hpp"

namespace tessera::vulkan {
namespace {

// Scale values: C (opset 21) or num_groups (opset 18), told apart by the scale's size.
int64_t params(const NodeView& node) {
  const tsr_tensor* scale = node.input(1);
  const int64_t c = node.input(0)->dims[1];
  return scale != nullptr && plugin::tensor_numel(*scale) == c ? c : node.attr_int("num_groups", 1);
}

std::string check(const NodeView& node) {
  const tsr_tensor* x = node.input(0);
  const int64_t groups = node.attr_int("num_groups", 0);
  if (x == nullptr || x->rank < 3 || groups <= 0 || x->dims[1] % groups != 0) {
    return "num_groups must divide the channels";
  }
  return check_norm(node, params(node));
}

void lower(Lowering& lowering, const NodeView& node) {
  const tsr_tensor& x = *node.input(0);
  const int64_t groups = node.attr_int("num_groups", 1);
  const int64_t count = params(node);
  const int64_t n_count = x.dims[0] * count;
  lower_norm(lowering, node, groups, n_count == 0 ? 1 : plugin::tensor_numel(x) / n_count, count);
}

}  // namespace

TESSERA_VULKAN_OP(GroupNormalization, check, lower);

}  // namespace tessera::vulkan
