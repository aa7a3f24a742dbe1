// Sigmoid: y = 1 / (1 + exp(-x)).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_sigmoid(ComputeContext& ctx) {
  // Two branches so exp() never overflows for large |x|.
  compute_float_activation(ctx, [](float v) {
    if (v >= 0.0f) return 1.0f / (1.0f + std::exp(-v));
    const float e = std::exp(v);
    return e / (1.0f + e);
  });
}

}  // namespace

TESSERA_REGISTER_OP("Sigmoid", infer_float_activation, compute_sigmoid);

}  // namespace tessera::ops
