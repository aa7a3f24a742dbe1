// Celu (opset 12): y = max(0, x) + min(0, alpha (e^(x / alpha) - 1)), alpha default 1 (not 0).
// float32 and float16 (computed in float32).
#include <algorithm>
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_celu(InferContext& ctx) {
  infer_float_activation(ctx);
  if (ctx.node.attrs.get_float("alpha", 1.0f) == 0.0f) ctx.fail("attribute 'alpha' must not be 0");
}

void compute_celu(ComputeContext& ctx) {
  const float alpha = ctx.node.attrs.get_float("alpha", 1.0f);
  compute_float_activation(ctx, [=](float v) {
    if (std::isnan(v)) return v;  // std::max / std::min would turn it into 0
    return std::max(0.0f, v) + std::min(0.0f, alpha * std::expm1(v / alpha));
  });
}

}  // namespace

TESSERA_REGISTER_OP("Celu", infer_celu, compute_celu);

}  // namespace tessera::ops
