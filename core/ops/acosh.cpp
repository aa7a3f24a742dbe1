// Acosh: y = acosh(x) (NaN below 1), float32 and float16 (computed in float32).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_acosh(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return std::acosh(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Acosh", infer_float_activation, compute_acosh);

}  // namespace tessera::ops
