// Not: not a over a bool operand, to a bool output, the operands broadcast to it
// (kernels/compare.cl), for every OpenCL plugin.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_compare(lw, node, index, CompareCode::kNot);
}

}  // namespace
TESSERA_OPENCL_OP("Not", check_compare, lower);
}  // namespace tessera::opencl
