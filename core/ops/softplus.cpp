// Softplus: y = ln(1 + e^x), float32 and float16 (computed in float32).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_softplus(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return softplus(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Softplus", infer_float_activation, compute_softplus);

}  // namespace tessera::ops
