// ThresholdedRelu (opset 10): y = x where x > alpha (default 1), else 0. float32 and float16.
#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_thresholded_relu(ComputeContext& ctx) {
  const float alpha = ctx.node.attrs.get_float("alpha", 1.0f);
  compute_float_activation(ctx, [=](float v) { return v > alpha ? v : 0.0f; });
}

}  // namespace

TESSERA_REGISTER_OP("ThresholdedRelu", infer_float_activation, compute_thresholded_relu);

}  // namespace tessera::ops
