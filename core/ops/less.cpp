// Less: elementwise a < b with numpy broadcasting (opset 7+); the output is bool. Both inputs
// share one numeric dtype (float16 compared as float; NaN compares false).
#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_less(InferContext& ctx) {
  expect_opset_at_least(ctx, 7);
  infer_comparison(ctx, kNumericDTypes);
}

void compute_less(ComputeContext& ctx) {
  compute_comparison(ctx, [](auto x, auto y) { return x < y; });
}

}  // namespace

TESSERA_REGISTER_OP("Less", infer_less, compute_less);

}  // namespace tessera::ops
