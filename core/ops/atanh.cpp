// Atanh: y = atanh(x) (NaN outside [-1, 1], +-inf at +-1), float32 and float16 (computed in
// float32).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_atanh(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return std::atanh(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Atanh", infer_float_activation, compute_atanh);

}  // namespace tessera::ops
