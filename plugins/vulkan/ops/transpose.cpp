// Transpose as a strided copy: the output walked in order, the input through permuted strides
// (any dtype kept on the device).
#include "ops/elementwise.hpp"
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  if (node.input(0)->rank > 6) return "rank above 6";
  return check_movable(node);
}

void lower(Lowering& lowering, const NodeView& node) {
  const tsr_tensor& x = *node.input(0);
  std::vector<int64_t> perm = node.attr_ints("perm", {});
  if (perm.empty()) {
    for (int32_t i = x.rank - 1; i >= 0; --i) perm.push_back(i);
  }
  const std::vector<int64_t> in_strides = dense_strides(shape_of(x));
  const std::vector<int64_t> out_shape = shape_of(*node.output(0));
  std::vector<int64_t> src(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) src[i] = in_strides[static_cast<size_t>(perm[i])];
  strided_copy(lowering, node, lowering.buffer(node.input_index(0)),
               lowering.buffer(node.output_index(0)), out_shape, src, 0, dense_strides(out_shape),
               0);
}

}  // namespace

TESSERA_VULKAN_OP(Transpose, check, lower);

}  // namespace tessera::vulkan
