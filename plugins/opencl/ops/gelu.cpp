// Gelu (opset 20): 0.5 x (1 + erf(x / sqrt 2)), or its tanh approximation with approximate =
// "tanh". On NCHW buffers of any rank (kernels/unary.cl), for every OpenCL plugin.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

std::string check(const NodeView& node, const Device& device) {
  const std::string approximate = node.attr_string("approximate", "none");
  if (approximate != "none" && approximate != "tanh") {
    return "approximate = '" + approximate + "' (none or tanh)";
  }
  return check_unary_any(node, device);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const bool tanh = node.attr_string("approximate", "none") == "tanh";
  lower_unary_any(lw, node, index, tanh ? UnaryCode::kGeluTanh : UnaryCode::kGelu);
}

}  // namespace
TESSERA_OPENCL_OP("Gelu", check, lower);
}  // namespace tessera::opencl
