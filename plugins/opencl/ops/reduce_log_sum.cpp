// ReduceLogSum: log(sum(x)) over any constant axes of a float tensor of rank <= 8, one work-item
// (or a work-group) per output (kernels/reduce.cl), for every OpenCL plugin.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_reduce_axes(lw, node, index, ReduceCode::kLogSum);
}

}  // namespace
TESSERA_OPENCL_OP("ReduceLogSum", check_reduce_axes, lower);
TESSERA_OPENCL_TUNABLE("ReduceLogSum", reduce_axes_options);
}  // namespace tessera::opencl
