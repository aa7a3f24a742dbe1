// Asinh: y = asinh(x), float32 and float16 (computed in float32).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_asinh(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return std::asinh(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Asinh", infer_float_activation, compute_asinh);

}  // namespace tessera::ops
