// Pad on the mali plugin: constant pads (and axes), modes constant, reflect and edge, rank <= 6,
// on NCHW (plugins/opencl/kernels/pad.cl, shared with adreno).
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device&) {
  return opencl::support::check_pad(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  std::string why;
  const opencl::support::PadCopy pad = *opencl::support::pad_copy(node, &why);
  const int64_t n = plugin::tensor_numel(node.output(0));
  const Config config = lw.config_for("pad.strided", n);
  opencl::Kernel k = lw.kernel(config);
  opencl::support::bind_pad(k, lw.buffer(node.input_index(0)),
                            lw.buffer(node.output_index(0)), to_i32(n, node), pad);
  lw.add_1d_step(index, std::move(k), n, config);
}

}  // namespace
TESSERA_MALI_OP("Pad", check, lower);
}  // namespace tessera::mali
