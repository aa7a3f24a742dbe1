// Flatten: reshapes to 2-D [d0 * ... * d(axis-1), d(axis) * ... * d(n-1)]; axis default 1,
// in [-rank, rank] (negative from opset 11). Any dtype.
#include "op.hpp"

namespace tessera::ops {
namespace {

void infer_flatten(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  int64_t axis = ctx.node.attrs.get_int("axis", 1);
  // Note the range includes rank itself (giving [numel, 1]), unlike most axis attributes.
  if (axis < -rank || axis > rank) {
    ctx.fail("attribute 'axis' = " + std::to_string(axis) + " is out of range [" +
             std::to_string(-rank) + ", " + std::to_string(rank) + "] for input shape " +
             shape_str(in));
  }
  if (axis < 0) axis += rank;
  int64_t outer = 1;
  int64_t inner = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= in[static_cast<size_t>(d)];
  ctx.outputs[0] = {ctx.input(0).dtype, {outer, inner}};
}

void compute_flatten(ComputeContext& ctx) {
  ctx.outputs[0] = ctx.input(0).reshaped(ctx.outputs[0].shape());
}

}  // namespace

TESSERA_REGISTER_OP("Flatten", infer_flatten, compute_flatten);

}  // namespace tessera::ops
