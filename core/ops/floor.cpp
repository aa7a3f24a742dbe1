// Floor: round toward -inf, float32 and float16.
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_floor(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return std::floor(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Floor", infer_float_activation, compute_floor);

}  // namespace tessera::ops
