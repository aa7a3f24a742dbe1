// HardSigmoid: y = max(0, min(1, alpha * x + beta)), alpha default 0.2, beta default 0.5.
#include <algorithm>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_hard_sigmoid(InferContext& ctx) {
  infer_float_activation(ctx);
  ctx.node.attrs.get_float("alpha", 0.2f);
  ctx.node.attrs.get_float("beta", 0.5f);
}

void compute_hard_sigmoid(ComputeContext& ctx) {
  const float alpha = ctx.node.attrs.get_float("alpha", 0.2f);
  const float beta = ctx.node.attrs.get_float("beta", 0.5f);
  compute_float_activation(
      ctx, [=](float v) { return std::max(0.0f, std::min(1.0f, alpha * v + beta)); });
}

}  // namespace

TESSERA_REGISTER_OP("HardSigmoid", infer_hard_sigmoid, compute_hard_sigmoid);

}  // namespace tessera::ops
