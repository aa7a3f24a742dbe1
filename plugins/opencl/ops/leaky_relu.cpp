// LeakyRelu: x, or alpha * x below 0 (where a plugin has no storage-specific kernel). On NCHW
// buffers of any rank (kernels/unary.cl), for every OpenCL plugin.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_unary_any(lw, node, index, UnaryCode::kLeakyRelu, node.attr_float("alpha", 0.01f));
}

}  // namespace
TESSERA_OPENCL_OP("LeakyRelu", check_unary_any, lower);
}  // namespace tessera::opencl
