// ReduceProd: the product over any constant axes of a float tensor of rank <= 8, one work-item per
// output (kernels/reduce.cl), for every OpenCL plugin.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_reduce_axes(lw, node, index, ReduceCode::kProd);
}

}  // namespace
TESSERA_OPENCL_OP("ReduceProd", check_reduce_axes, lower);
TESSERA_OPENCL_TUNABLE("ReduceProd", reduce_axes_options);
}  // namespace tessera::opencl
