// Round: to the nearest integer, halves to even (numpy.round, ONNX Round), float32 and float16.
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_round(ComputeContext& ctx) {
  // nearbyint rounds in the current mode, round-to-nearest-even unless a caller changed it;
  // std::round would send halves away from zero (2.5 -> 3).
  compute_float_activation(ctx, [](float v) { return std::nearbyint(v); });
}

}  // namespace

TESSERA_REGISTER_OP("Round", infer_float_activation, compute_round);

}  // namespace tessera::ops
