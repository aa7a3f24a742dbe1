// BatchNormalization (inference): scale and shift folded from constant statistics at compile
// time, applied per channel (shaders/channel_affine.comp) with a fused activation.
#include <cmath>

#include "ops/op.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  const std::string f = float_only(node);
  if (!f.empty()) return f;
  if (node.input(0)->rank < 2) return "needs rank 2 or more";
  for (int32_t i = 1; i <= 4; ++i) {
    const tsr_tensor* t = node.input(i);
    if (t == nullptr || t->data == nullptr || t->dtype != TSR_DTYPE_FLOAT32) {
      return "scale, bias, mean and variance must be float32 constants";
    }
  }
  if (node.num_outputs() > 1 && node.output(1) != nullptr) return "training mode outputs";
  return "";
}

void lower(Lowering& lowering, const NodeView& node) {
  const tsr_tensor& x = *node.input(0);
  const int64_t channels = x.dims[1];
  const float epsilon = node.attr_float("epsilon", 1e-5f);
  auto data = [&node](int32_t i) { return static_cast<const float*>(node.input(i)->data); };
  std::vector<float> scale(static_cast<size_t>(channels));
  std::vector<float> shift(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    const float s = data(1)[c] / std::sqrt(data(4)[c] + epsilon);
    scale[static_cast<size_t>(c)] = s;
    shift[static_cast<size_t>(c)] = data(2)[c] - data(3)[c] * s;
  }
  int32_t out = node.output_index(0);
  const Activation act = fuse_activation(lowering, node, out);
  const int64_t count = plugin::tensor_numel(x);
  const int64_t inner = channels == 0 ? 0 : count / x.dims[0] / channels;
  Kernel k =
      linear_kernel("channel_affine", count, 64,
                    {narrow(count, node, "element count"), narrow(channels, node, "C"),
                     narrow(inner, node, "plane"), act.code, float_bits(act.a), float_bits(act.b)});
  const Buffer& sc = lowering.constant_floats(scale);
  const Buffer& sh = lowering.constant_floats(shift);
  lowering.dispatch(node, k, {&lowering.buffer(node.input_index(0)), &sc, &sh},
                    {&lowering.buffer(out)});
}

}  // namespace

TESSERA_VULKAN_OP(BatchNormalization, check, lower);

}  // namespace tessera::vulkan
