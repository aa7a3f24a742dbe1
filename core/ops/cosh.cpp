// Cosh: y = cosh(x), float32 and float16 (computed in float32).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_cosh(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return std::cosh(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Cosh", infer_float_activation, compute_cosh);

}  // namespace tessera::ops
