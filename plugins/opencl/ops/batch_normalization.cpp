// BatchNormalization (inference) folded into y = x * scale[c] + shift[c] on NCHW buffers of any
// rank >= 2 (a BatchNorm1d after a Linear layer is rank 2); the plugins' own kernels run the
// rank-4 activations in their storage first.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

const Schedule kAffine{
    "eltwise.channel_affine.any", "norm.cl", "channel_affine_any_f32", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kAffine);

std::string check(const NodeView& node, const Device& device) {
  const std::string r = check_float_io(node, device.flavor.name);
  if (!r.empty()) return r;
  if (node.input(0).rank < 2) return "input rank below 2";
  return support::check_batch_norm_params(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  std::vector<float> scale, shift;
  support::fold_batch_norm(node, scale, shift);
  int64_t inner = 1;
  for (int32_t d = 2; d < x.rank; ++d) inner *= x.dims[d];
  const int64_t n = plugin::tensor_numel(x);
  const Config config = lw.config_for(kAffine.id, n);
  Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.constant_buffer(scale))
      .buffer(lw.constant_buffer(shift))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(n, node))
      .i32(to_i32(x.dims[1], node))
      .i32(to_i32(inner, node));
  lw.add_1d_step(index, std::move(k), n, config);
}

}  // namespace
TESSERA_OPENCL_OP("BatchNormalization", check, lower);
}  // namespace tessera::opencl
