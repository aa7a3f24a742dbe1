// Sin: y = sin(x) in radians, float32 and float16 (computed in float32).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_sin(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return std::sin(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Sin", infer_float_activation, compute_sin);

}  // namespace tessera::ops
