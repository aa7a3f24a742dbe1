// Sqrt: float32 and float16 (computed in float32); a negative input gives NaN, as in numpy.
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_sqrt(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return std::sqrt(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Sqrt", infer_float_activation, compute_sqrt);

}  // namespace tessera::ops
