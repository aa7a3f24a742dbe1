// ReduceMean: the mean over any constant axes of a float tensor of rank <= 8, one work-item per
// output (kernels/reduce.cl), for every OpenCL plugin (the plugins' own kernels run the spatial
// means).
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_reduce_axes(lw, node, index, ReduceCode::kMean);
}

}  // namespace
TESSERA_OPENCL_OP("ReduceMean", check_reduce_axes, lower);
TESSERA_OPENCL_TUNABLE("ReduceMean", reduce_axes_options);
}  // namespace tessera::opencl
