// Not: elementwise logical negation of a bool tensor.
#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_not(InferContext& ctx) {
  infer_logical(ctx, 1);
}

void compute_not(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const bool* in = x.data<bool>();
  bool* out = ctx.outputs[0].data<bool>();
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = !in[i];
}

}  // namespace

TESSERA_REGISTER_OP("Not", infer_not, compute_not);

}  // namespace tessera::ops
