// Transpose on the mali plugin: any permutation of up to 6 axes (channel shuffles, the NCHW <->
// NHWC moves around channels-last LayerNorms): the shared strided copy on NCHW.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device&) {
  return opencl::support::check_transpose(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_strided_copy(lw, node, index, opencl::support::transpose_copy(node));
}

}  // namespace
TESSERA_MALI_OP("Transpose", check, lower);
}  // namespace tessera::mali
