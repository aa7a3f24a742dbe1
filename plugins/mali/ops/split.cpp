// Split on the mali plugin: the outputs are the input's consecutive runs along the axis
// (attention's q, k, v), one shared strided copy each, on NCHW, rank <= 6.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device&) {
  return opencl::support::check_split(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  for (int32_t i = 0; i < node.num_outputs(); ++i) {
    lower_strided_copy(lw, node, index, opencl::support::split_copy(node, i), i);
  }
}

}  // namespace
TESSERA_MALI_OP("Split", check, lower);
}  // namespace tessera::mali
