// Mul where a plugin's own kernels do not take the shapes. Two inputs broadcasting to the output
// (numpy rules, up to 4 dims after merging contiguous ones), on NCHW buffers (kernels/binary.cl),
// for every OpenCL plugin.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_binary_strided(lw, node, index, BinaryCode::kMul);
}

}  // namespace
TESSERA_OPENCL_OP("Mul", check_binary_strided, lower);
}  // namespace tessera::opencl
