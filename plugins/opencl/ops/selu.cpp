// Selu: gamma * (x, or alpha * (e^x - 1) below 0), element-wise. On NCHW buffers of any rank
// (kernels/unary.cl), for every OpenCL plugin.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_unary_any(lw, node, index, UnaryCode::kSelu,
                  node.attr_float("alpha", 1.67326319217681884765625f),
                  node.attr_float("gamma", 1.05070102214813232421875f));
}

}  // namespace
TESSERA_OPENCL_OP("Selu", check_unary_any, lower);
}  // namespace tessera::opencl
