// Split: the outputs are the input's consecutive runs along the axis
// (attention's q, k, v), one shared strided copy each, on NCHW, rank <= 6.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

std::string check(const NodeView& node, const Device&) {
  return support::check_split(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  for (int32_t i = 0; i < node.num_outputs(); ++i) {
    lower_strided_copy(lw, node, index, support::split_copy(node, i), i);
  }
}

}  // namespace
TESSERA_OPENCL_OP("Split", check, lower);
}  // namespace tessera::opencl
