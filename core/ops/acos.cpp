// Acos: y = acos(x) (NaN outside [-1, 1]), float32 and float16 (computed in float32).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_acos(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return std::acos(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Acos", infer_float_activation, compute_acos);

}  // namespace tessera::ops
