// IsInf of a float32 tensor, to bool (kernels/compare.cl classify_f32), for every OpenCL plugin:
// the guards torch.nan_to_num and isfinite export.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_classify(lw, node, index, /*is_inf=*/true);
}

}  // namespace
TESSERA_OPENCL_OP("IsInf", check_classify, lower);
}  // namespace tessera::opencl
