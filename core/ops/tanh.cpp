// Tanh: y = tanh(x).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_tanh(ComputeContext& ctx) {
  compute_float_activation(ctx, [](float v) { return std::tanh(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Tanh", infer_float_activation, compute_tanh);

}  // namespace tessera::ops
