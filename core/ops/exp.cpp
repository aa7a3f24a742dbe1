// Exp: y = e^x, float32 and float16 (computed in float32); overflow gives +inf.
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_exp(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return std::exp(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Exp", infer_float_activation, compute_exp);

}  // namespace tessera::ops
