// Gather on the adreno plugin: one constant index along an axis (a scalar index drops the axis);
// the shared strided copy on NCHW buffers (shared.hpp).
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device&) {
  return opencl::support::check_gather(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_strided_copy(lw, node, index, opencl::support::gather_copy(node));
}

}  // namespace
TESSERA_ADRENO_OP("Gather", check, lower);
}  // namespace tessera::adreno
