// GroupNormalization (ONNX opsets 18 and 21) on float32 [N, C, spatial...]: channels split into
// num_groups groups of C / num_groups consecutive channels; each (n, group) is normalized over its
// channels and spatial positions, then scaled and shifted.
//   opset 18: scale and bias have one value per group (the form opset 21 deprecates).
//   opset 21: scale and bias have one value per channel; attribute stash_type.
#include <string>
#include <vector>

#include "op.hpp"
#include "util/normalization.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

bool per_group_params(int64_t opset) {
  return opset < 21;
}

void infer_group_normalization(InferContext& ctx) {
  ctx.expect_inputs(3, 3);
  ctx.expect_dtype(0, {DType::kFloat32});
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 2) {
    ctx.fail("input 0 ('X') has shape " + shape_str(x) + "; expected rank >= 2 (N, C, ...)");
  }
  if (!ctx.node.attrs.has("num_groups")) ctx.fail("required attribute 'num_groups' is missing");
  const int64_t groups = attr_int(ctx, "num_groups", 0);
  const int64_t channels = x[1];
  if (groups <= 0) {
    ctx.fail("attribute 'num_groups' = " + std::to_string(groups) + " must be positive");
  }
  if (channels % groups != 0) {
    ctx.fail("attribute 'num_groups' = " + std::to_string(groups) + " does not divide the " +
             std::to_string(channels) + " channels of input 0");
  }
  attr_epsilon(ctx);
  if (ctx.opset >= 21) check_stash_type(ctx);
  const bool per_group = per_group_params(ctx.opset);
  const int64_t len = per_group ? groups : channels;
  const std::string per = per_group ? "group (opset < 21)" : "channel (opset >= 21)";
  expect_vector_input(ctx, 1, len, "scale", per);
  expect_vector_input(ctx, 2, len, "bias", per);
  ctx.outputs.at(0) = {DType::kFloat32, x};
}

void compute_group_normalization(ComputeContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const Shape& x = xt.shape();
  const int64_t batch = x[0], channels = x[1];
  const int64_t spatial = batch * channels == 0 ? 0 : xt.numel() / (batch * channels);
  const int64_t groups = ctx.node.attrs.get_int("num_groups");
  const float* scale = ctx.input(1).data<float>();
  const float* bias = ctx.input(2).data<float>();
  // Per-channel parameters either way: opset 18's per-group values repeat over their channels.
  std::vector<float> channel_scale(scale, scale + (per_group_params(ctx.opset) ? 0 : channels));
  std::vector<float> channel_bias(bias, bias + (per_group_params(ctx.opset) ? 0 : channels));
  if (per_group_params(ctx.opset)) {
    const int64_t per_group = channels / groups;
    for (int64_t c = 0; c < channels; ++c) {
      channel_scale.push_back(scale[c / per_group]);
      channel_bias.push_back(bias[c / per_group]);
    }
  }
  group_normalize(xt.data<float>(), ctx.outputs[0].data<float>(), batch, channels, spatial, groups,
                  ctx.node.attrs.get_float("epsilon", 1e-5f), channel_scale.data(),
                  channel_bias.data());
}

}  // namespace

TESSERA_REGISTER_OP("GroupNormalization", infer_group_normalization, compute_group_normalization);

}  // namespace tessera::ops
