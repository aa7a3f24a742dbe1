// PRelu: y = x for x >= 0, slope * x otherwise; slope broadcasts to x in one direction only
// (the output always has x's shape).
#include "op.hpp"
#include "util/broadcast.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_prelu(InferContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(0, {DType::kFloat32});
  ctx.expect_dtype(1, {DType::kFloat32});
  const Shape& x = ctx.input(0).shape;
  const Shape& slope = ctx.input(1).shape;
  if (slope.size() > x.size() || broadcast_shapes(x, slope, ctx.where) != x) {
    ctx.fail("slope shape " + shape_str(slope) + " does not broadcast to input shape " +
             shape_str(x) + " (PRelu broadcasts slope to X only; e.g. [C, 1, 1] for NCHW)");
  }
  ctx.outputs[0] = {DType::kFloat32, x};
}

void compute_prelu(ComputeContext& ctx) {
  broadcast_binary<float, float>(ctx.input(0), ctx.input(1), ctx.outputs[0],
                                 [](float x, float s) { return x >= 0.0f ? x : s * x; });
}

}  // namespace

TESSERA_REGISTER_OP("PRelu", infer_prelu, compute_prelu);

}  // namespace tessera::ops
