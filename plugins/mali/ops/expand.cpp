// Expand on the mali plugin: input 0 broadcast to the output's shape, the shared strided copy
// with stride 0 along each broadcast axis (rank <= 6), on NCHW.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device&) {
  return opencl::support::check_expand(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_strided_copy(lw, node, index, opencl::support::expand_copy(node));
}

}  // namespace
TESSERA_MALI_OP("Expand", check, lower);
}  // namespace tessera::mali
