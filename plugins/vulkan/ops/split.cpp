// Split: one strided copy per output from its slice of the input (any dtype kept on the device).
#include "ops/elementwise.hpp"
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  if (node.input(0)->rank > 6) return "rank above 6";
  for (int32_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output(i) != nullptr && node.output(i)->dtype != node.input(0)->dtype) {
      return "an output of another dtype";
    }
  }
  return check_movable(node);
}

void lower(Lowering& lowering, const NodeView& node) {
  const std::vector<int64_t> in_shape = shape_of(*node.input(0));
  int64_t axis = node.attr_int("axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(in_shape.size());
  const std::vector<int64_t> in_strides = dense_strides(in_shape);
  const Buffer& x = lowering.buffer(node.input_index(0));
  int64_t offset = 0;
  for (int32_t i = 0; i < node.num_outputs(); ++i) {
    if (node.output(i) == nullptr) continue;
    const std::vector<int64_t> out_shape = shape_of(*node.output(i));
    strided_copy(lowering, node, x, lowering.buffer(node.output_index(i)), out_shape, in_strides,
                 offset * in_strides[static_cast<size_t>(axis)], dense_strides(out_shape), 0);
    offset += out_shape[static_cast<size_t>(axis)];
  }
}

}  // namespace

TESSERA_VULKAN_OP(Split, check, lower);

}  // namespace tessera::vulkan
