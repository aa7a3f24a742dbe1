// LogSoftmax along an axis (CTC heads of speech and OCR recognizers), for every OpenCL plugin (ops/softmax_common.cpp).
#include "softmax_common.hpp"

namespace tessera::opencl {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_softmax(lw, node, index, /*log=*/true);
}

}  // namespace
TESSERA_OPENCL_OP("LogSoftmax", check_softmax, lower);
}  // namespace tessera::opencl
