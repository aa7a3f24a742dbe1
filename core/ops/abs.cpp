// Abs: |x| for float32, float16, int64, int32, int8 and uint8. The lowest signed integer maps to
// itself, as in numpy's two's-complement wrap-around.
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_abs(InferContext& ctx) {
  infer_unary(ctx, kNumericDTypes);
}

void compute_abs(ComputeContext& ctx) {
  compute_numeric_unary(ctx, [](auto v) {
    using T = decltype(v);
    if constexpr (std::is_floating_point_v<T>) {
      return std::fabs(v);
    } else if constexpr (std::is_signed_v<T>) {
      return v < 0 ? wrapping_sub(T{0}, v) : v;
    } else {
      return v;
    }
  });
}

}  // namespace

TESSERA_REGISTER_OP("Abs", infer_abs, compute_abs);

}  // namespace tessera::ops
