// Cos: y = cos(x) in radians, float32 and float16 (computed in float32).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_cos(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return std::cos(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Cos", infer_float_activation, compute_cos);

}  // namespace tessera::ops
