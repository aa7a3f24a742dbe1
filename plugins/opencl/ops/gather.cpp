// Gather with constant indices along an axis, on NCHW: one index (how
// exporters pick q, k and v out of one tensor) is the shared strided copy; index tensors of any
// shape (dynamo's as_strided) use the shared gather kernel (plugins/opencl/kernels/common/gather.cl).
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

std::string check(const NodeView& node, const Device&) {
  return support::check_gather_any(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  if (support::gather_one_index(node)) {
    lower_strided_copy(lw, node, index, support::gather_copy(node));
    return;
  }
  const support::GatherRows g = support::gather_rows(node);
  const int64_t n = plugin::tensor_numel(node.output(0));
  const Config config = lw.config_for("gather.rows", n);
  Kernel k = lw.kernel(config);
  support::bind_gather(k, lw.buffer(node.input_index(0)), lw.constant_buffer(g.indices),
                       lw.buffer(node.output_index(0)), g);
  lw.add_1d_step(index, std::move(k), n, config);
}

}  // namespace
TESSERA_OPENCL_OP("Gather", check, lower);
}  // namespace tessera::opencl
