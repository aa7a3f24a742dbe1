// Expand: broadcasts the input against the constant 1-D int64 'shape' input (numpy rules in both
// directions, so dims of 1 in 'shape' keep the input's dim). Any dtype.
#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_expand(InferContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(1, {DType::kInt64});
  const Tensor& shape = ctx.constant_input(1);
  if (shape.rank() != 1) ctx.fail("input 'shape' must be 1-D, got " + shape_str(shape.shape()));
  ctx.outputs[0] = {ctx.input(0).dtype,
                    broadcast_shapes(ctx.input(0).shape, shape.to_int64_vector(), ctx.where)};
}

void compute_expand(ComputeContext& ctx) {
  broadcast_copy(ctx.input(0), ctx.outputs[0]);
}

}  // namespace

TESSERA_REGISTER_OP("Expand", infer_expand, compute_expand);

}  // namespace tessera::ops
