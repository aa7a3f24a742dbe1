// BatchNormalization (ONNX opsets 7-15):
//   y = scale * (x - mean) / sqrt(var + epsilon) + bias, per channel (dim 1) of a float32 tensor.
// Opset 7-8 spatial = 0 (statistics per channel and spatial position) is handled.
// training_mode = 1 (opset 14+) normalises with the batch's own per-channel mean and (biased)
// variance and may output the running statistics, input * momentum + batch * (1 - momentum), as
// the ONNX reference does. It is deterministic: timm's weight-standardised convs (NFNet, BiT)
// export their weight standardisation this way, on constant weights, and constant folding runs it
// once at load. Before opset 14 the extra outputs meant training and stay unsupported.
#include <cmath>
#include <string>
#include <vector>

#include "op.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

// Statistics are per channel (spatial = 1, the default) or per element of one sample (opset < 9
// with spatial = 0).
bool per_channel(const Node& node, int64_t opset) {
  return opset >= 9 || node.attrs.get_int("spatial", 1) != 0;
}

void infer_batch_normalization(InferContext& ctx) {
  ctx.expect_inputs(5, 5);
  for (size_t i = 0; i < 5; ++i) ctx.expect_dtype(i, {DType::kFloat32});
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 2) {
    ctx.fail("input 0 has shape " + shape_str(x) + "; expected rank >= 2 (N, C, ...)");
  }
  const bool training = ctx.opset >= 14 && attr_bool(ctx, "training_mode", false);
  for (size_t i = 1; i < ctx.node.outputs.size(); ++i) {
    if (ctx.node.outputs[i] == kNoValue) continue;
    if (!training) {
      ctx.unsupported("output " + std::to_string(i) +
                      " (running/saved statistics) is a training output; it is supported from "
                      "opset 14 with training_mode = 1, otherwise only output 0 (Y) may be used");
    }
    if (i > 2) ctx.fail("has " + std::to_string(ctx.node.outputs.size()) + " outputs; at most 3");
  }
  if (training) {
    const float momentum = attr_float(ctx, "momentum", 0.9f);
    if (!std::isfinite(momentum)) ctx.fail("attribute 'momentum' must be a finite number");
  }
  const float epsilon = attr_float(ctx, "epsilon", 1e-5f);
  if (!(epsilon >= 0.0f)) ctx.fail("attribute 'epsilon' must be >= 0");
  if (ctx.opset < 9) attr_bool(ctx, "spatial", true);
  Shape stat_shape = {x[1]};
  if (!per_channel(ctx.node, ctx.opset)) stat_shape.assign(x.begin() + 1, x.end());
  static const char* kNames[] = {"", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i) {
    const Shape& s = ctx.input(i).shape;
    // spatial = 0 models sometimes carry the statistics as [C, 1, 1]; the element count decides.
    const bool ok = s == stat_shape || (!per_channel(ctx.node, ctx.opset) &&
                                        shape_numel(s) == shape_numel(stat_shape));
    if (!ok) {
      ctx.fail("input " + std::to_string(i) + " (" + kNames[i] + ") has shape " + shape_str(s) +
               "; expected " + shape_str(stat_shape));
    }
  }
  ctx.outputs.at(0) = {DType::kFloat32, x};
  for (size_t i = 1; i < ctx.outputs.size(); ++i) ctx.outputs[i] = {DType::kFloat32, {x[1]}};
}

// Training mode: per channel, the mean and biased variance over the batch and spatial positions
// (in double), then y from those, and the running statistics when asked for.
void compute_training(ComputeContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const Shape& x = xt.shape();
  const float epsilon = ctx.node.attrs.get_float("epsilon", 1e-5f);
  const float momentum = ctx.node.attrs.get_float("momentum", 0.9f);
  const float* xd = xt.data<float>();
  const float* scale = ctx.input(1).data<float>();
  const float* bias = ctx.input(2).data<float>();
  const float* in_mean = ctx.input(3).data<float>();
  const float* in_var = ctx.input(4).data<float>();
  float* yd = ctx.outputs[0].data<float>();
  const int64_t batch = x[0];
  const int64_t channels = x[1];
  const int64_t inner = batch == 0 || channels == 0 ? 0 : xt.numel() / batch / channels;
  const double count = static_cast<double>(batch * inner);
  for (int64_t c = 0; c < channels; ++c) {
    double sum = 0.0;
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t i = 0; i < inner; ++i) sum += xd[(n * channels + c) * inner + i];
    }
    const double mean = count > 0 ? sum / count : 0.0;
    double squares = 0.0;
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t i = 0; i < inner; ++i) {
        const double d = xd[(n * channels + c) * inner + i] - mean;
        squares += d * d;
      }
    }
    const double var = count > 0 ? squares / count : 0.0;
    const double inv_std = 1.0 / std::sqrt(var + epsilon);
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t at = (n * channels + c) * inner + i;
        yd[at] = static_cast<float>(scale[c] * (xd[at] - mean) * inv_std + bias[c]);
      }
    }
    if (ctx.wants_output(1)) {
      ctx.outputs[1].data<float>()[c] =
          static_cast<float>(in_mean[c] * momentum + mean * (1.0 - momentum));
    }
    if (ctx.wants_output(2)) {
      ctx.outputs[2].data<float>()[c] =
          static_cast<float>(in_var[c] * momentum + var * (1.0 - momentum));
    }
  }
}

void compute_batch_normalization(ComputeContext& ctx) {
  if (ctx.opset >= 14 && ctx.node.attrs.get_int("training_mode", 0) != 0) {
    compute_training(ctx);
    return;
  }
  const Tensor& xt = ctx.input(0);
  const Shape& x = xt.shape();
  const float epsilon = ctx.node.attrs.get_float("epsilon", 1e-5f);
  const float* xd = xt.data<float>();
  const float* scale = ctx.input(1).data<float>();
  const float* bias = ctx.input(2).data<float>();
  const float* mean = ctx.input(3).data<float>();
  const float* var = ctx.input(4).data<float>();
  float* yd = ctx.outputs[0].data<float>();

  const int64_t batch = x[0];
  const int64_t channels = x[1];
  const int64_t sample = batch == 0 ? 0 : xt.numel() / batch;
  const int64_t inner = channels == 0 ? 0 : sample / channels;
  const bool channelwise = per_channel(ctx.node, ctx.opset);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t i = 0; i < sample; ++i) {
      const int64_t s = channelwise ? i / inner : i;
      const double inv_std = 1.0 / std::sqrt(static_cast<double>(var[s]) + epsilon);
      const double v = xd[n * sample + i];
      yd[n * sample + i] = static_cast<float>(scale[s] * (v - mean[s]) * inv_std + bias[s]);
    }
  }
}

}  // namespace

TESSERA_REGISTER_OP("BatchNormalization", infer_batch_normalization, compute_batch_normalization);

}  // namespace tessera::ops
