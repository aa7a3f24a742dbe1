// PRelu: x, or slope * x below 0, the slope broadcast to x (one per channel as exported:
// [C, 1, 1]); the strided binary kernel (kernels/binary.cl) on NCHW buffers, every OpenCL plugin.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_binary_strided(lw, node, index, BinaryCode::kPRelu);
}

}  // namespace
TESSERA_OPENCL_OP("PRelu", check_binary_strided, lower);
}  // namespace tessera::opencl
