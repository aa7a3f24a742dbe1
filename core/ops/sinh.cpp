// Sinh: y = sinh(x), float32 and float16 (computed in float32).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_sinh(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return std::sinh(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Sinh", infer_float_activation, compute_sinh);

}  // namespace tessera::ops
