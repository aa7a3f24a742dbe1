// ArgMin: the index of the minimum along one axis of a float32, int64 or int32 tensor, as int64
// (keepdims either way: the output's shape is core's), one work-item per output
// (kernels/arg_reduce.cl), for every OpenCL plugin.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_arg_reduce(lw, node, index, /*is_max=*/false);
}

}  // namespace
TESSERA_OPENCL_OP("ArgMin", check_arg_reduce, lower);
}  // namespace tessera::opencl
