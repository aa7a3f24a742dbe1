// Gather with constant indices along an axis on the mali plugin, on NCHW: one index (how
// exporters pick q, k and v out of one tensor) is the shared strided copy; index tensors of any
// shape (dynamo's as_strided) use the shared gather kernel (plugins/opencl/kernels/gather.cl).
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device&) {
  return opencl::support::check_gather_any(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  if (opencl::support::gather_one_index(node)) {
    lower_strided_copy(lw, node, index, opencl::support::gather_copy(node));
    return;
  }
  const opencl::support::GatherRows g = opencl::support::gather_rows(node);
  const int64_t n = plugin::tensor_numel(node.output(0));
  const Config config = lw.config_for("gather.rows", n);
  opencl::Kernel k = lw.kernel(config);
  opencl::support::bind_gather(k, lw.buffer(node.input_index(0)), lw.constant_buffer(g.indices),
                               lw.buffer(node.output_index(0)), g);
  lw.add_1d_step(index, std::move(k), n, config);
}

}  // namespace
TESSERA_MALI_OP("Gather", check, lower);
}  // namespace tessera::mali
