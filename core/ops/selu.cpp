// Selu: y = gamma * x for x > 0, gamma * alpha * (e^x - 1) otherwise, float32 and float16
// (computed in float32). The defaults are the self-normalising constants of the SELU paper as
// the ONNX spec rounds them to float.
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

constexpr float kDefaultAlpha = 1.67326319217681884765625f;
constexpr float kDefaultGamma = 1.05070102214813232421875f;

void infer_selu(InferContext& ctx) {
  infer_float_activation(ctx);
  finite_float_attr(ctx, "alpha", kDefaultAlpha);
  finite_float_attr(ctx, "gamma", kDefaultGamma);
}

void compute_selu(ComputeContext& ctx) {
  const float alpha = ctx.node.attrs.get_float("alpha", kDefaultAlpha);
  const float gamma = ctx.node.attrs.get_float("gamma", kDefaultGamma);
  compute_float_activation(ctx, [alpha, gamma](float v) {
    return v > 0.0f ? gamma * v : gamma * alpha * std::expm1(v);
  });
}

}  // namespace

TESSERA_REGISTER_OP("Selu", infer_selu, compute_selu);

}  // namespace tessera::ops
