// BatchNormalization (ONNX opsets 7-15), inference form only:
//   y = scale * (x - mean) / sqrt(var + epsilon) + bias, per channel (dim 1) of a float32 tensor.
// Training (training_mode = 1, or asking for the running-statistics outputs) is rejected as
// unsupported. Opset 7-8 spatial = 0 (statistics per channel and spatial position) is handled.
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
  if (attr_bool(ctx, "training_mode", false)) {
    ctx.unsupported(
        "training_mode = 1 is not supported; Tessera runs inference only (export "
        "the model in eval mode)");
  }
  for (size_t i = 1; i < ctx.node.outputs.size(); ++i) {
    if (ctx.node.outputs[i] != kNoValue) {
      ctx.unsupported("output " + std::to_string(i) +
                      " (running/saved statistics) is a training output and is not supported; "
                      "only output 0 (Y) may be used");
    }
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
}

void compute_batch_normalization(ComputeContext& ctx) {
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
