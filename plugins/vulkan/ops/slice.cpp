// Slice with constant starts/ends/axes/steps (negative steps included) as a strided copy
// (any dtype kept on the device).
#include <algorithm>

#include "ops/elementwise.hpp"
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  const std::string f = check_movable(node);
  if (!f.empty()) return f;
  if (node.input(0)->rank > 6) return "rank above 6";
  for (int32_t i = 1; i < node.num_inputs(); ++i) {
    if (node.input(i) != nullptr && node.input(i)->data == nullptr) {
      return "starts, ends, axes and steps must be constants";
    }
  }
  return "";
}

void lower(Lowering& lowering, const NodeView& node) {
  const std::vector<int64_t> in_shape = shape_of(*node.input(0));
  const int64_t rank = static_cast<int64_t>(in_shape.size());
  const bool legacy = node.num_inputs() == 1;  // opset < 10: attributes
  const std::vector<int64_t> starts =
      legacy ? node.attr_ints("starts", {}) : constant_ints(node, 1, {});
  std::vector<int64_t> axes = legacy ? node.attr_ints("axes", {}) : constant_ints(node, 3, {});
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  const std::vector<int64_t> steps =
      legacy ? std::vector<int64_t>(starts.size(), 1)
             : constant_ints(node, 4, std::vector<int64_t>(starts.size(), 1));
  const std::vector<int64_t> in_strides = dense_strides(in_shape);
  std::vector<int64_t> src = in_strides;
  int64_t offset = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    const int64_t dim = in_shape[static_cast<size_t>(a)];
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    // ONNX clamps starts to [0, dim] for positive steps and [0, dim - 1] for negative ones.
    start =
        steps[i] > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, 0, dim - 1);
    offset += start * in_strides[static_cast<size_t>(a)];
    src[static_cast<size_t>(a)] = in_strides[static_cast<size_t>(a)] * steps[i];
  }
  const std::vector<int64_t> out_shape = shape_of(*node.output(0));
  strided_copy(lowering, node, lowering.buffer(node.input_index(0)),
               lowering.buffer(node.output_index(0)), out_shape, src, offset,
               dense_strides(out_shape), 0);
}

}  // namespace

TESSERA_VULKAN_OP(Slice, check, lower);

}  // namespace tessera::vulkan
