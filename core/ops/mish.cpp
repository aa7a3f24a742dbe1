// Mish (opset 18): y = x * tanh(softplus(x)), float32 and float16 (computed in float32).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_mish(InferContext& ctx) {
  expect_opset_at_least(ctx, 18);
  infer_float_activation(ctx);
}

void compute_mish(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return v * std::tanh(softplus(v)); });
}

}  // namespace

TESSERA_REGISTER_OP("Mish", infer_mish, compute_mish);

}  // namespace tessera::ops
