// Slice on the adreno plugin: constant starts, ends, axes and steps, rank <= 6; the shared strided
// copy on NCHW buffers (shared.hpp).
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device&) {
  return opencl::support::check_slice(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_strided_copy(lw, node, index, opencl::support::slice_copy(node));
}

}  // namespace
TESSERA_ADRENO_OP("Slice", check, lower);
}  // namespace tessera::adreno
