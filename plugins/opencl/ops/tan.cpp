// Tan, element-wise. On NCHW buffers of any rank (kernels/unary.cl), for
// every OpenCL plugin.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_unary_any(lw, node, index, UnaryCode::kTan);
}

}  // namespace
TESSERA_OPENCL_OP("Tan", check_unary_any, lower);
}  // namespace tessera::opencl
