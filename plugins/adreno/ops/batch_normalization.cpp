// BatchNormalization (inference) on the adreno plugin: folded on the host into a per-channel
// scale and shift (one float4 per texel block), y = x * scale[c4] + shift[c4].
#include <cmath>

#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device& device) {
  if (node.num_inputs() != 5) return "expects 5 inputs (X, scale, B, mean, var)";
  std::string r = check_image_io(node, device);
  if (!r.empty()) return r;
  const char* names[] = {"scale", "B", "mean", "var"};
  for (int32_t i = 1; i < 5; ++i) {
    r = check_constant(node, i, names[i - 1]);
    if (!r.empty()) return r;
    if (numel_of(node.input(i)) != node.input(0).dims[1]) {
      return std::string(names[i - 1]) + " must have one value per channel";
    }
  }
  if (node.attr_int("training_mode", 0) != 0) return "training_mode = 1 is not supported";
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const int64_t channels = x.dims[1];
  const float eps = node.attr_float("epsilon", 1e-5f);
  const float* scale = constant_floats(node, 1);
  const float* bias = constant_floats(node, 2);
  const float* mean = constant_floats(node, 3);
  const float* var = constant_floats(node, 4);
  std::vector<float> a(static_cast<size_t>(channels)), b(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    a[c] = scale[c] / std::sqrt(var[c] + eps);
    b[c] = bias[c] - mean[c] * a[c];
  }
  const auto dims = blocked_dims(x, node);
  const auto range = texel_range(x);
  const Config config = default_config("eltwise.image.affine", lw.device(), range[0]);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.input_image(node.input_id(0), index))
      .buffer(lw.constant_buffer(pad_channels(a)))
      .buffer(lw.constant_buffer(pad_channels(b)))
      .buffer(lw.output_image(node.output_id(0), index))
      .i32x4(dims[0], dims[1], dims[2], dims[3]);
  lw.add_step(index, std::move(k), range, config);
}

}  // namespace
TESSERA_ADRENO_OP("BatchNormalization", check, lower);
}  // namespace tessera::adreno
