// Transpose: any permutation of up to 6 axes (channel shuffles, the NCHW <->
// NHWC moves around channels-last LayerNorms): the shared strided copy on NCHW.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

std::string check(const NodeView& node, const Device&) {
  return support::check_transpose(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_strided_copy(lw, node, index, support::transpose_copy(node));
}

}  // namespace
TESSERA_OPENCL_OP("Transpose", check, lower);
}  // namespace tessera::opencl
