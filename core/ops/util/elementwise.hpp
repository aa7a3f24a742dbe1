// Shared pieces of the elementwise op files: the float activation template (float32, and float16
// computed in float32), the numeric unary template, the broadcasting binary-op loop, NaN-aware
// min/max, and dtype dispatchers. Header-only for the same reason as broadcast.hpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>

#include "op.hpp"
#include "util/broadcast.hpp"

namespace tessera::ops {

// Calls fn(T{}) with T the C++ element type of `dtype` (uint16_t bits for float16). Throws
// naming `where` for kUndefined.
template <typename Fn>
void dispatch_dtype(DType dtype, const std::string& where, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32:
      fn(float{});
      return;
    case DType::kFloat16:
      fn(uint16_t{});
      return;
    case DType::kInt64:
      fn(int64_t{});
      return;
    case DType::kInt32:
      fn(int32_t{});
      return;
    case DType::kInt8:
      fn(int8_t{});
      return;
    case DType::kUInt8:
      fn(uint8_t{});
      return;
    case DType::kBool:
      fn(bool{});
      return;
    case DType::kUndefined:
      break;
  }
  throw Error(where + ": no kernel for dtype " + dtype_name(dtype));
}

// The dtypes of the kernels that compute on every numeric type (no bool), and of the float-only
// ones; for expect_dtype.
inline constexpr std::initializer_list<DType> kNumericDTypes = {
    DType::kFloat32, DType::kFloat16, DType::kInt64, DType::kInt32, DType::kInt8, DType::kUInt8};
inline constexpr std::initializer_list<DType> kFloatDTypes = {DType::kFloat32, DType::kFloat16};

// Calls fn(T{}) like dispatch_dtype, but only for the numeric dtypes (no bool): for kernels
// whose arithmetic means nothing on bool. Throws naming `where` for any other dtype.
template <typename Fn>
void dispatch_numeric(DType dtype, const std::string& where, Fn&& fn) {
  if (dtype == DType::kBool) throw Error(where + ": no kernel for dtype bool");
  dispatch_dtype(dtype, where, [&](auto tag) {
    if constexpr (!std::is_same_v<decltype(tag), bool>) fn(tag);
  });
}

// Calls fn(float{}) for float32 and fn(uint16_t{}) for float16; throws naming `where` for any
// other dtype.
template <typename Fn>
void dispatch_float(DType dtype, const std::string& where, Fn&& fn) {
  if (dtype == DType::kFloat32) return fn(float{});
  if (dtype == DType::kFloat16) return fn(uint16_t{});
  throw Error(where + ": no kernel for dtype " + dtype_name(dtype) + " (float32 and float16 only)");
}

// float16 elements are stored as uint16_t bits and computed in float; every other element type
// is computed as itself. (No uint16 dtype exists, so uint16_t always means float16.)
template <typename T>
using ComputeType = std::conditional_t<std::is_same_v<T, uint16_t>, float, T>;

template <typename T>
ComputeType<T> to_compute(T v) {
  if constexpr (std::is_same_v<T, uint16_t>) {
    return half_to_float(v);
  } else {
    return v;
  }
}
template <typename T>
T from_compute(ComputeType<T> v) {
  if constexpr (std::is_same_v<T, uint16_t>) {
    return float_to_half(v);
  } else {
    return v;
  }
}

// Shape inference of a one-input, one-output op whose output is like its input, for the listed
// input dtypes.
inline void infer_unary(InferContext& ctx, std::initializer_list<DType> allowed) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, allowed);
  ctx.outputs[0] = {ctx.input(0).dtype, ctx.input(0).shape};
}

// y[i] = f(x[i]) for every numeric dtype; `f` is generic and sees float for float16.
template <typename F>
void compute_numeric_unary(ComputeContext& ctx, F f) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.outputs[0];
  dispatch_numeric(x.dtype(), "node '" + ctx.node.name + "' (" + ctx.node.op_type + ")",
                   [&](auto tag) {
                     using T = decltype(tag);
                     const T* in = x.data<T>();
                     T* out = y.data<T>();
                     for (int64_t i = 0; i < x.numel(); ++i) {
                       out[i] = from_compute<T>(static_cast<ComputeType<T>>(f(to_compute(in[i]))));
                     }
                   });
}

// max/min that return NaN when either side is NaN, as numpy's maximum/minimum and the ONNX
// reference do (std::max would return whichever side the comparison happened to pick).
template <typename T>
T max_propagating_nan(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return a < b ? b : a;
}
template <typename T>
T min_propagating_nan(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return b < a ? b : a;
}

// The identity of max (-inf for floats, the lowest value for integers, false for bool) and of
// min (+inf, the highest value, true): what a max or min over zero elements gives.
template <typename T>
T lowest_or_neg_inf() {
  if constexpr (std::is_floating_point_v<T>) {
    return -std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}
template <typename T>
T highest_or_inf() {
  if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::max();
  }
}

// Fails naming the node when the model's opset predates the op (Gelu at opset 17 is not an
// ONNX op, whatever a converter meant by it).
inline void expect_opset_at_least(const InferContext& ctx, int64_t since) {
  if (ctx.opset < since) {
    ctx.fail(ctx.node.op_type + " exists from opset " + std::to_string(since) +
             " of the default domain; this model imports opset " + std::to_string(ctx.opset));
  }
}

// Reads float attribute `name` in an infer function; fails naming the node and attribute when it
// is not a float or is NaN or infinite.
inline float finite_float_attr(const InferContext& ctx, const std::string& name, float fallback) {
  float v = fallback;
  try {
    v = ctx.node.attrs.get_float(name, fallback);
  } catch (const Error& e) {
    ctx.fail(e.what());
  }
  if (!std::isfinite(v)) {
    ctx.fail("attribute '" + name + "' = " + std::to_string(v) + " must be a finite number");
  }
  return v;
}

// ln(1 + e^x) without overflow: for x > 0 it is computed as x + ln(1 + e^-x), so e^x is never
// evaluated where it would be infinite.
inline float softplus(float x) {
  return x > 0.0f ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// Shape inference of a one-input, one-output activation: the output is like the input.
inline void infer_float_activation(InferContext& ctx) {
  infer_unary(ctx, kFloatDTypes);
}

// y[i] = f(x[i]) for float32, or for float16 through float32 (what fp16 storage means here).
template <typename F>
void compute_float_activation(ComputeContext& ctx, F f) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.outputs[0];
  if (x.dtype() == DType::kFloat16) {
    const uint16_t* in = x.data<uint16_t>();
    uint16_t* out = y.data<uint16_t>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = float_to_half(f(half_to_float(in[i])));
    return;
  }
  const float* in = x.data<float>();
  float* out = y.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = f(in[i]);
}

// out[i] = f(a[bcast_a(i)], b[bcast_b(i)]) over the broadcast output; In and Out are the C++
// element types (no float16 here: callers convert).
template <typename In, typename Out, typename F>
void broadcast_binary(const Tensor& a, const Tensor& b, Tensor& out, F f) {
  const BroadcastIndexer ia(a.shape(), out.shape());
  const BroadcastIndexer ib(b.shape(), out.shape());
  const In* pa = a.data<In>();
  const In* pb = b.data<In>();
  Out* po = out.data<Out>();
  for (int64_t i = 0; i < out.numel(); ++i) po[i] = f(pa[ia.offset(i)], pb[ib.offset(i)]);
}

// Shape inference of a comparison (Equal, Less, Greater, LessOrEqual, GreaterOrEqual): two inputs
// of one dtype among `allowed`, numpy broadcasting, a bool output.
inline void infer_comparison(InferContext& ctx, std::initializer_list<DType> allowed) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(0, allowed);
  ctx.expect_dtype(1, allowed);
  const InputInfo& a = ctx.input(0);
  const InputInfo& b = ctx.input(1);
  if (a.dtype != b.dtype) {
    ctx.fail(std::string("inputs have different dtypes (") + dtype_name(a.dtype) + " and " +
             dtype_name(b.dtype) + "); insert a Cast so they match");
  }
  ctx.outputs[0] = {DType::kBool, broadcast_shapes(a.shape, b.shape, ctx.where)};
}

// out = cmp(a, b) with broadcasting, a bool output; float16 is compared as float (values, not
// bits: +0 == -0 and NaN is unordered). `cmp` is generic.
template <typename Cmp>
void compute_comparison(ComputeContext& ctx, Cmp cmp) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  dispatch_dtype(a.dtype(), "node '" + ctx.node.name + "' (" + ctx.node.op_type + ")",
                 [&](auto tag) {
                   using T = decltype(tag);
                   broadcast_binary<T, bool>(a, b, ctx.outputs[0], [&](T x, T y) {
                     return static_cast<bool>(cmp(to_compute(x), to_compute(y)));
                   });
                 });
}

// Shape inference of a logical op on bool tensors (Not: one input; And, Or, Xor: two, broadcast).
inline void infer_logical(InferContext& ctx, size_t arity) {
  ctx.expect_inputs(arity, arity);
  Shape shape;
  for (size_t i = 0; i < arity; ++i) {
    ctx.expect_dtype(i, {DType::kBool});
    shape = i == 0 ? ctx.input(0).shape : broadcast_shapes(shape, ctx.input(i).shape, ctx.where);
  }
  ctx.outputs[0] = {DType::kBool, shape};
}

// Copies element bcast(i) of `in` to element i of `out` for every i; any dtype (by element size).
inline void broadcast_copy(const Tensor& in, Tensor& out) {
  const BroadcastIndexer idx(in.shape(), out.shape());
  const size_t size = dtype_size(in.dtype());
  const auto* src = static_cast<const std::byte*>(in.raw());
  auto* dst = static_cast<std::byte*>(out.raw());
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::memcpy(dst + static_cast<size_t>(i) * size,
                src + static_cast<size_t>(idx.offset(i)) * size, size);
  }
}

// Integer + - * wrap around like numpy (done in unsigned arithmetic: signed overflow is undefined
// in C++, and uint8/int8 operands promote to int); floats use plain arithmetic.
template <typename T>
T wrapping_add(T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(x) + static_cast<U>(y));
  } else {
    return x + y;
  }
}
template <typename T>
T wrapping_sub(T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(x) - static_cast<U>(y));
  } else {
    return x - y;
  }
}
template <typename T>
T wrapping_mul(T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    // uint32_t * uint32_t promotes to int on no platform we build for, but int64 is explicit.
    return static_cast<T>(static_cast<uint64_t>(static_cast<U>(x)) *
                          static_cast<uint64_t>(static_cast<U>(y)));
  } else {
    return x * y;
  }
}

// Before opset 7, Add/Sub/Mul/Div/... broadcast only with attribute broadcast=1, and B then
// lines up with A at attribute 'axis' (default: B matches A's trailing dims). Returns B's shape
// rewritten so that numpy broadcasting gives the same result.
inline Shape legacy_broadcast_shape(const Node& node, const Shape& a, const Shape& b,
                                    const std::string& where) {
  if (node.attrs.get_int("broadcast", 0) == 0) {
    if (a != b) {
      throw Error(where + ": shapes " + shape_str(a) + " and " + shape_str(b) +
                  " differ and attribute 'broadcast' is 0 (opset < 7 needs broadcast=1)");
    }
    return b;
  }
  const int64_t rank_a = static_cast<int64_t>(a.size());
  const int64_t rank_b = static_cast<int64_t>(b.size());
  int64_t axis = node.attrs.get_int("axis", rank_a - rank_b);
  if (axis < 0) axis += rank_a;
  if (axis < 0 || axis + rank_b > rank_a) {
    throw Error(where + ": attribute 'axis' = " + std::to_string(node.attrs.get_int("axis", 0)) +
                " does not place B " + shape_str(b) + " inside A " + shape_str(a));
  }
  Shape aligned = b;
  aligned.insert(aligned.end(), static_cast<size_t>(rank_a - axis - rank_b), 1);
  if (broadcast_shapes(a, aligned, where) != a) {
    throw Error(where + ": B " + shape_str(b) + " at axis " + std::to_string(axis) +
                " does not broadcast to A " + shape_str(a));
  }
  return aligned;
}

// Shape inference shared by Add, Sub, Mul and Div: same dtype on both sides, numpy broadcasting.
inline void infer_arithmetic(InferContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(0, kNumericDTypes);
  const InputInfo& a = ctx.input(0);
  const InputInfo& b = ctx.input(1);
  if (a.dtype != b.dtype) {
    ctx.fail(std::string("inputs have different dtypes (") + dtype_name(a.dtype) + " and " +
             dtype_name(b.dtype) + "); insert a Cast so they match");
  }
  Shape b_shape = b.shape;
  if (ctx.opset < 7) b_shape = legacy_broadcast_shape(ctx.node, a.shape, b.shape, ctx.where);
  ctx.outputs[0] = {a.dtype, broadcast_shapes(a.shape, b_shape, ctx.where)};
}

// Kernel shared by Add, Sub, Mul and Div: out = op(a, b) with broadcasting. `op` is a generic
// callable invoked with float, int64_t, int32_t, int8_t or uint8_t pairs (float16 goes through
// float) and returns the same type.
template <typename Op>
void compute_arithmetic(ComputeContext& ctx, Op op) {
  const Tensor& a = ctx.input(0);
  Tensor b = ctx.input(1);
  if (ctx.opset < 7) {
    b = b.reshaped(
        legacy_broadcast_shape(ctx.node, a.shape(), b.shape(), "node '" + ctx.node.name + "'"));
  }
  Tensor& out = ctx.outputs[0];
  dispatch_numeric(
      a.dtype(), "node '" + ctx.node.name + "' (" + ctx.node.op_type + ")", [&](auto tag) {
        using T = decltype(tag);
        broadcast_binary<T, T>(
            a, b, out, [&](T x, T y) { return from_compute<T>(op(to_compute(x), to_compute(y))); });
      });
}

}  // namespace tessera::ops
