// Reciprocal: y = 1 / x, float32 and float16 (computed in float32); 1 / 0 = inf.
#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_reciprocal(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return 1.0f / v; });
}

}  // namespace

TESSERA_REGISTER_OP("Reciprocal", infer_float_activation, compute_reciprocal);

}  // namespace tessera::ops
