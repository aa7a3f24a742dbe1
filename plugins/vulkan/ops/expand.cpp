// Expand: the input broadcast to the output shape by a strided copy (stride 0 where it repeats);
// any dtype kept on the device.
#include "ops/elementwise.hpp"
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  if (node.output(0)->rank > 6) return "rank above 6";
  return check_movable(node);
}

void lower(Lowering& lowering, const NodeView& node) {
  const std::vector<int64_t> out_shape = shape_of(*node.output(0));
  strided_copy(lowering, node, lowering.buffer(node.input_index(0)),
               lowering.buffer(node.output_index(0)), out_shape,
               broadcast_strides(shape_of(*node.input(0)), out_shape), 0, dense_strides(out_shape),
               0);
}

}  // namespace

TESSERA_VULKAN_OP(Expand, check, lower);

}  // namespace tessera::vulkan
