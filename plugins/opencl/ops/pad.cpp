// Pad: constant pads (and axes), modes constant, reflect and edge, rank <= 6,
// on NCHW (plugins/opencl/kernels/common/pad.cl, shared with adreno).
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

std::string check(const NodeView& node, const Device&) {
  return support::check_pad(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  std::string why;
  const support::PadCopy pad = *support::pad_copy(node, &why);
  const int64_t n = plugin::tensor_numel(node.output(0));
  const Config config = lw.config_for("pad.strided", n);
  Kernel k = lw.kernel(config);
  support::bind_pad(k, lw.buffer(node.input_index(0)), lw.buffer(node.output_index(0)),
                    to_i32(n, node), pad);
  lw.add_1d_step(index, std::move(k), n, config);
}

}  // namespace
TESSERA_OPENCL_OP("Pad", check, lower);
}  // namespace tessera::opencl
