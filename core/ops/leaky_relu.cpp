// LeakyRelu: y = x for x >= 0, alpha * x otherwise (alpha default 0.01).
#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_leaky_relu(InferContext& ctx) {
  infer_float_activation(ctx);
  ctx.node.attrs.get_float("alpha", 0.01f);  // rejects a non-float attribute early
}

void compute_leaky_relu(ComputeContext& ctx) {
  const float alpha = ctx.node.attrs.get_float("alpha", 0.01f);
  compute_float_activation(ctx, [alpha](float v) { return v >= 0.0f ? v : alpha * v; });
}

}  // namespace

TESSERA_REGISTER_OP("LeakyRelu", infer_leaky_relu, compute_leaky_relu);

}  // namespace tessera::ops
