// Softmax along an axis, for every OpenCL plugin (ops/softmax_common.cpp).
#include "softmax_common.hpp"

namespace tessera::opencl {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_softmax(lw, node, index, /*log=*/false);
}

}  // namespace
TESSERA_OPENCL_OP("Softmax", check_softmax, lower);
}  // namespace tessera::opencl
