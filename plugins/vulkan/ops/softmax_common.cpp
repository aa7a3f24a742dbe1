// Softmax over one axis (opset >= 13 semantics; before 13 the axis and everything after it,
// which the same kernel computes with LEN = their product).
#include "ops/softmax.hpp"

namespace tessera::vulkan {

std::string check_softmax(const NodeView& node) {
  return float_only(node);
}

void lower_softmax(Lowering& lowering, const NodeView& node, bool log) {
  const tsr_tensor& x = *node.input(0);
  const bool legacy = lowering.region().opset() < 13;
  int64_t axis = node.attr_int("axis", legacy ? 1 : -1);
  if (axis < 0) axis += x.rank;
  int64_t outer = 1, len = 1, inner = 1;
  for (int32_t i = 0; i < x.rank; ++i) {
    if (i < axis)
      outer *= x.dims[i];
    else if (i == axis || legacy)
      len *= x.dims[i];
    else
      inner *= x.dims[i];
  }
  Kernel k = linear_kernel("softmax", outer * inner, 1,
                           {narrow(outer, node, "outer size"), narrow(len, node, "axis size"),
                            narrow(inner, node, "inner size"), log ? 1 : 0});
  lowering.dispatch(node, k, {&lowering.buffer(node.input_index(0))},
                    {&lowering.buffer(node.output_index(0))});
}

}  // namespace tessera::vulkan
