// Min of any number of inputs broadcasting to the output (numpy rules; two inputs: float32,
// int64 or int32), folded into it one input at a time on NCHW buffers (kernels/binary.cl), for
// every OpenCL plugin.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_variadic(lw, node, index, BinaryCode::kMin);
}

}  // namespace
TESSERA_OPENCL_OP("Min", check_variadic, lower);
}  // namespace tessera::opencl
