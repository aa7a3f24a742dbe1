// Asin: y = asin(x) (NaN outside [-1, 1]), float32 and float16 (computed in float32).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_asin(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return std::asin(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Asin", infer_float_activation, compute_asin);

}  // namespace tessera::ops
