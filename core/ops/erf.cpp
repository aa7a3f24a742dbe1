// Erf (opset 9): the Gauss error function, float32 and float16 (computed in float32).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_erf(InferContext& ctx) {
  expect_opset_at_least(ctx, 9);
  infer_float_activation(ctx);
}

void compute_erf(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return std::erf(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Erf", infer_erf, compute_erf);

}  // namespace tessera::ops
