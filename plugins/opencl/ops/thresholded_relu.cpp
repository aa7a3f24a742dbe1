// ThresholdedRelu: x above alpha, else 0, element-wise. On NCHW buffers of any rank
// (kernels/unary.cl), for every OpenCL plugin.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_unary_any(lw, node, index, UnaryCode::kThresholdedRelu, node.attr_float("alpha", 1.0f));
}

}  // namespace
TESSERA_OPENCL_OP("ThresholdedRelu", check_unary_any, lower);
}  // namespace tessera::opencl
