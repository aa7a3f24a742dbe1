// Elu: y = x for x >= 0, alpha * (e^x - 1) otherwise (alpha default 1), float32 and float16
// (computed in float32).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_elu(InferContext& ctx) {
  infer_float_activation(ctx);
  finite_float_attr(ctx, "alpha", 1.0f);
}

void compute_elu(ComputeContext& ctx) {
  const float alpha = ctx.node.attrs.get_float("alpha", 1.0f);
  compute_float_activation(ctx, [alpha](float v) { return v >= 0.0f ? v : alpha * std::expm1(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Elu", infer_elu, compute_elu);

}  // namespace tessera::ops
