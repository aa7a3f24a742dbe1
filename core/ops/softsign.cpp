// Softsign: y = x / (1 + abs(x)), float32 and float16 (computed in float32).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_softsign(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return v / (1.0f + std::fabs(v)); });
}

}  // namespace

TESSERA_REGISTER_OP("Softsign", infer_float_activation, compute_softsign);

}  // namespace tessera::ops
