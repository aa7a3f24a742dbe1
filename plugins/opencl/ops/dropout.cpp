// Dropout: the output shares the input's device buffer (same bytes, same
// layout: an NCHW4c input stays NCHW4c).
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

std::string check(const NodeView& node, const Device& device) {
  // Inference only: training_mode (opset 12+, input 2) must be absent or a constant false.
  if (node.num_inputs() > 2 && node.has_input(2)) {
    const tsr_tensor& t = node.input(2);
    if (!t.data || t.dtype != TSR_DTYPE_BOOL) return "training_mode must be a constant bool";
    if (*static_cast<const uint8_t*>(t.data) != 0) return "training_mode = true is not supported";
  }
  return check_alias(node, device);
}

}  // namespace
TESSERA_OPENCL_OP_WITH_RULE("Dropout", check, lower_alias, follow_input0);
}  // namespace tessera::opencl
