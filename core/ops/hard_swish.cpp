// HardSwish (opset 14): y = x * max(0, min(1, x / 6 + 0.5)), i.e. HardSigmoid with alpha = 1/6.
#include <algorithm>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_hard_swish(ComputeContext& ctx) {
  compute_float_activation(
      ctx, [](float v) { return v * std::max(0.0f, std::min(1.0f, v * (1.0f / 6.0f) + 0.5f)); });
}

}  // namespace

TESSERA_REGISTER_OP("HardSwish", infer_float_activation, compute_hard_swish);

}  // namespace tessera::ops
