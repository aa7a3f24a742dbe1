// Pow: y = x ^ exponent with numpy broadcasting; y has x's dtype. Before opset 12 both inputs
// are float32 or float16 of one dtype; from 12 x is float32, float16, int64 or int32 and the
// exponent any of those or int8/uint8. An integer base with an integer exponent is computed
// exactly in integers (wrapping like numpy's power; a negative exponent truncates 1 / x^n toward
// zero as ONNX Runtime does, and 0 to a negative power is an error); every other pairing is
// computed in double and converted to x's dtype (saturating for integers, where numpy leaves an
// out-of-range result undefined).
#include <cmath>
#include <limits>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/broadcast.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_pow(InferContext& ctx) {
  ctx.expect_inputs(2, 2);
  if (ctx.opset < 12) {
    ctx.expect_dtype(0, kFloatDTypes);
    if (ctx.input(1).dtype != ctx.input(0).dtype) {
      ctx.fail(std::string("input 1 (exponent) has dtype ") + dtype_name(ctx.input(1).dtype) +
               " but input 0 has " + dtype_name(ctx.input(0).dtype) +
               "; before opset 12 they must match");
    }
  } else {
    ctx.expect_dtype(0, {DType::kFloat32, DType::kFloat16, DType::kInt64, DType::kInt32});
    ctx.expect_dtype(1, kNumericDTypes);
  }
  ctx.outputs.at(0) = {ctx.input(0).dtype,
                       broadcast_shapes(ctx.input(0).shape, ctx.input(1).shape, ctx.where)};
}

// base ^ exp in integers; exp < 0 gives 1 / base^|exp| truncated toward zero.
template <typename T>
T integer_pow(T base, int64_t exp, const std::string& where) {
  if (exp < 0) {
    if (base == 0)
      throw Error(where + ": integer 0 raised to the negative power " + std::to_string(exp));
    if (base == 1) return 1;
    if constexpr (std::is_signed_v<T>) {
      if (base == -1) return exp % 2 == 0 ? 1 : -1;
    }
    return 0;
  }
  T result = 1;
  T square = base;
  for (uint64_t e = static_cast<uint64_t>(exp); e != 0; e >>= 1) {
    if (e & 1) result = wrapping_mul(result, square);
    square = wrapping_mul(square, square);
  }
  return result;
}

// A double to integer type T: NaN gives 0, values beyond T's range saturate, the rest truncate
// toward zero (a plain cast of an out-of-range double is undefined behaviour in C++).
template <typename T>
T saturating_cast(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) {
    return std::numeric_limits<T>::lowest();
  }
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

void compute_pow(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& e = ctx.input(1);
  Tensor& y = ctx.outputs[0];
  const std::string where = node_where(ctx.node);
  const BroadcastIndexer ix(x.shape(), y.shape());
  const BroadcastIndexer ie(e.shape(), y.shape());
  dispatch_numeric(x.dtype(), where, [&](auto base_tag) {
    using B = decltype(base_tag);
    dispatch_numeric(e.dtype(), where, [&](auto exp_tag) {
      using E = decltype(exp_tag);
      const B* px = x.data<B>();
      const E* pe = e.data<E>();
      B* py = y.data<B>();
      for (int64_t i = 0; i < y.numel(); ++i) {
        const ComputeType<B> base = to_compute(px[ix.offset(i)]);
        const ComputeType<E> exp = to_compute(pe[ie.offset(i)]);
        if constexpr (std::is_integral_v<ComputeType<B>> && std::is_integral_v<ComputeType<E>>) {
          py[i] = integer_pow(base, static_cast<int64_t>(exp), where);
        } else {
          const double v = std::pow(static_cast<double>(base), static_cast<double>(exp));
          if constexpr (std::is_integral_v<ComputeType<B>>) {
            py[i] = saturating_cast<B>(v);
          } else {
            py[i] = from_compute<B>(static_cast<float>(v));
          }
        }
      }
    });
  });
}

}  // namespace

TESSERA_REGISTER_OP("Pow", infer_pow, compute_pow);

}  // namespace tessera::ops
