// Sum: sum of any number of inputs broadcasting to the output (numpy rules), folded into it one
// input at a time on NCHW buffers (kernels/binary.cl), for every OpenCL plugin.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_variadic(lw, node, index, BinaryCode::kAdd);
}

}  // namespace
TESSERA_OPENCL_OP("Sum", check_variadic, lower);
}  // namespace tessera::opencl
