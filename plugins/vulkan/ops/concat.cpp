// Concat: one strided copy per input into its slice of the output (any dtype kept on the device:
// elements narrower than a word are written with atomics, so slices sharing a word are safe).
#include "ops/elementwise.hpp"
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  const std::string f = check_movable(node);
  if (!f.empty()) return f;
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    if (node.input(i) == nullptr || node.input(i)->dtype != node.output(0)->dtype) {
      return "every input must have the output's dtype";
    }
  }
  if (node.output(0)->rank > 6) return "rank above 6";
  return "";
}

void lower(Lowering& lowering, const NodeView& node) {
  const std::vector<int64_t> out_shape = shape_of(*node.output(0));
  int64_t axis = node.attr_int("axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(out_shape.size());
  const std::vector<int64_t> out_strides = dense_strides(out_shape);
  const Buffer& y = lowering.buffer(node.output_index(0));
  int64_t offset = 0;
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    const std::vector<int64_t> in_shape = shape_of(*node.input(i));
    strided_copy(lowering, node, lowering.buffer(node.input_index(i)), y, in_shape,
                 dense_strides(in_shape), 0, out_strides,
                 offset * out_strides[static_cast<size_t>(axis)]);
    offset += in_shape[static_cast<size_t>(axis)];
  }
}

}  // namespace

TESSERA_VULKAN_OP(Concat, check, lower);

}  // namespace tessera::vulkan
