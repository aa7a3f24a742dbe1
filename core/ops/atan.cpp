// Atan: y = atan(x), float32 and float16 (computed in float32).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_atan(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return std::atan(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Atan", infer_float_activation, compute_atan);

}  // namespace tessera::ops
