// Sign: -1, 0 or 1 by the sign of x (NaN stays NaN), every numeric dtype (opset 9+).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_sign(InferContext& ctx) {
  expect_opset_at_least(ctx, 9);
  infer_unary(ctx, kNumericDTypes);
}

void compute_sign(ComputeContext& ctx) {
  compute_numeric_unary(ctx, [](auto v) {
    using T = decltype(v);
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(v)) return v;
    }
    return static_cast<T>((T{0} < v) - (v < T{0}));
  });
}

}  // namespace

TESSERA_REGISTER_OP("Sign", infer_sign, compute_sign);

}  // namespace tessera::ops
