// Size: the element count of the input as an int64 scalar (shape inference folds it wherever the
// shape is known, as it does Shape).
#include "op.hpp"

namespace tessera::ops {
namespace {

void infer_size(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.outputs[0] = {DType::kInt64, Shape{}};
}

void compute_size(ComputeContext& ctx) {
  ctx.outputs[0].data<int64_t>()[0] = ctx.input(0).numel();
}

}  // namespace

TESSERA_REGISTER_OP("Size", infer_size, compute_size);

}  // namespace tessera::ops
