// Log: the natural logarithm, float32 and float16 (computed in float32); log(0) = -inf and a
// negative input gives NaN, as in numpy.
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_log(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return std::log(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Log", infer_float_activation, compute_log);

}  // namespace tessera::ops
