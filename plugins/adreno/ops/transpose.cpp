// Transpose on the adreno plugin: any permutation of up to 6 axes; the shared strided copy on NCHW
// buffers (shared.hpp).
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device&) {
  return opencl::support::check_transpose(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_strided_copy(lw, node, index, opencl::support::transpose_copy(node));
}

}  // namespace
TESSERA_ADRENO_OP("Transpose", check, lower);
}  // namespace tessera::adreno
