// Tan: y = tan(x) in radians, float32 and float16 (computed in float32).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_tan(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return std::tan(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Tan", infer_float_activation, compute_tan);

}  // namespace tessera::ops
