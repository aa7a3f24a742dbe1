// BatchNormalization (inference) on the mali plugin: folded on the host into a per-channel
// scale and shift, y = x * scale[c] + shift[c].
#include <cmath>

#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const opencl::DeviceInfo&) {
  if (node.num_inputs() != 5) return "expects 5 inputs (X, scale, B, mean, var)";
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  if (node.input(0).rank < 2) return "input must have a channel dim";
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
  int64_t inner = 1;
  for (int32_t d = 2; d < x.rank; ++d) inner *= x.dims[d];
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
  const int64_t n = numel_of(x);
  const Config config = default_config("eltwise.channel_affine", lw.device(), n);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_id(0)))
      .buffer(lw.upload(a))
      .buffer(lw.upload(b))
      .buffer(lw.buffer(node.output_id(0)))
      .i32(to_i32(n, node))
      .i32(to_i32(channels, node))
      .i32(to_i32(inner, node));
  add_1d_step(lw, index, std::move(k), n, config);
}

}  // namespace
TESSERA_MALI_OP("BatchNormalization", check, lower);
}  // namespace tessera::mali
