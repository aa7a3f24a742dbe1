// GreaterOrEqual: elementwise a >= b with numpy broadcasting (opset 12+); the output is bool. Both
// inputs share one numeric dtype (float16 compared as float; NaN compares false).
#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_greater_or_equal(InferContext& ctx) {
  expect_opset_at_least(ctx, 12);
  infer_comparison(ctx, kNumericDTypes);
}

void compute_greater_or_equal(ComputeContext& ctx) {
  compute_comparison(ctx, [](auto x, auto y) { return x >= y; });
}

}  // namespace

TESSERA_REGISTER_OP("GreaterOrEqual", infer_greater_or_equal, compute_greater_or_equal);

}  // namespace tessera::ops
