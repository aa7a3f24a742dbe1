// ReduceL1: the sum of absolute values over any constant axes of a float tensor of rank <= 8, one
// work-item per output (kernels/reduce.cl), for every OpenCL plugin.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_reduce_axes(lw, node, index, ReduceCode::kL1);
}

}  // namespace
TESSERA_OPENCL_OP("ReduceL1", check_reduce_axes, lower);
TESSERA_OPENCL_TUNABLE("ReduceL1", reduce_axes_options);
}  // namespace tessera::opencl
