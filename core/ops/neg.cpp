// Neg: y = -x for float32, float16, int64, int32 and int8 (the signed types ONNX lists). The
// lowest integer negates to itself, as in numpy's two's-complement wrap-around.
#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_neg(InferContext& ctx) {
  infer_unary(ctx, {DType::kFloat32, DType::kFloat16, DType::kInt64, DType::kInt32, DType::kInt8});
}

void compute_neg(ComputeContext& ctx) {
  compute_numeric_unary(ctx, [](auto v) {
    using T = decltype(v);
    if constexpr (std::is_integral_v<T>) {
      return wrapping_sub(T{0}, v);
    } else {
      return -v;
    }
  });
}

}  // namespace

TESSERA_REGISTER_OP("Neg", infer_neg, compute_neg);

}  // namespace tessera::ops
