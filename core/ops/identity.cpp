// Identity: the output is the input (any dtype); the kernel hands out a view, no copy.
#include "op.hpp"

namespace tessera::ops {
namespace {

void infer_identity(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.outputs[0] = {ctx.input(0).dtype, ctx.input(0).shape};
}

void compute_identity(ComputeContext& ctx) {
  ctx.outputs[0] = ctx.input(0);
}

}  // namespace

TESSERA_REGISTER_OP("Identity", infer_identity, compute_identity);

}  // namespace tessera::ops
