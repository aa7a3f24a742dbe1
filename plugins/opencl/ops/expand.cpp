// Expand: input 0 broadcast to the output's shape, the shared strided copy
// with stride 0 along each broadcast axis (rank <= 6), on NCHW.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

std::string check(const NodeView& node, const Device&) {
  return support::check_expand(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_strided_copy(lw, node, index, support::expand_copy(node));
}

}  // namespace
TESSERA_OPENCL_OP("Expand", check, lower);
}  // namespace tessera::opencl
