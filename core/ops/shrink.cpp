// Shrink (opset 9): y = x + bias where x < -lambd, x - bias where x > lambd, else 0 (lambd
// default 0.5, bias 0). float32 and float16.
#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_shrink(ComputeContext& ctx) {
  const float lambd = ctx.node.attrs.get_float("lambd", 0.5f);
  const float bias = ctx.node.attrs.get_float("bias", 0.0f);
  compute_float_activation(
      ctx, [=](float v) { return v < -lambd ? v + bias : (v > lambd ? v - bias : 0.0f); });
}

}  // namespace

TESSERA_REGISTER_OP("Shrink", infer_float_activation, compute_shrink);

}  // namespace tessera::ops
