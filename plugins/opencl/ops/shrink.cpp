// Shrink: x + bias below -lambd, x - bias above lambd, else 0. On NCHW buffers of any rank
// (kernels/unary.cl), for every OpenCL plugin.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_unary_any(lw, node, index, UnaryCode::kShrink, node.attr_float("lambd", 0.5f),
                  node.attr_float("bias", 0.0f));
}

}  // namespace
TESSERA_OPENCL_OP("Shrink", check_unary_any, lower);
}  // namespace tessera::opencl
