// Ceil: round toward +inf, float32 and float16.
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_ceil(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return std::ceil(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Ceil", infer_float_activation, compute_ceil);

}  // namespace tessera::ops
