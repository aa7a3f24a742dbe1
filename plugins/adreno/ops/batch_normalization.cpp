// BatchNormalization (inference) on the adreno plugin: folded on the host into a per-channel
// scale and shift (one float4 per texel block), y = x * scale[c4] + shift[c4].
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device& device) {
  if (node.num_inputs() != 5) return "expects 5 inputs (X, scale, B, mean, var)";
  std::string r = check_image_io(node, device);
  if (!r.empty()) return r;
  return opencl::support::check_batch_norm_params(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  std::vector<float> a, b;
  opencl::support::fold_batch_norm(node, a, b);
  const auto dims = blocked_dims(x, node);
  const auto range = texel_range(x);
  const Config config = lw.config_for("eltwise.image.affine", range[0]);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.image(node.input_index(0)))
      .buffer(lw.constant_buffer(pad_channels(a)))
      .buffer(lw.constant_buffer(pad_channels(b)))
      .buffer(lw.image(node.output_index(0)))
      .i32x4(dims[0], dims[1], dims[2], dims[3]);
  lw.add_step(index, std::move(k), range, config);
}

}  // namespace
TESSERA_ADRENO_OP("BatchNormalization", check, lower);
}  // namespace tessera::adreno
