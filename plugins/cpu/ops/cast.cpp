// Cast between float32, int32, int64, int8, uint8 and bool (a float32-to-float32 Cast is a view,
// view.cpp): a mask turned into numbers (bool -> float32), token ids narrowed or widened, a
// float32 that indexes (-> int64). Float to integer truncates toward zero, as static_cast and
// ONNX Runtime do; a float outside the target's range is clamped to it (ONNX leaves the result
// undefined; the cast never has undefined behaviour); NaN becomes 0. To bool: nonzero is true.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

bool castable(int32_t t) {
  return t == TSR_DTYPE_FLOAT32 || t == TSR_DTYPE_INT32 || t == TSR_DTYPE_INT64 ||
         t == TSR_DTYPE_INT8 || t == TSR_DTYPE_UINT8 || t == TSR_DTYPE_BOOL;
}

template <typename To, typename From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From{0};
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(v)) return To{0};
    constexpr double lo = static_cast<double>(std::numeric_limits<To>::lowest());
    constexpr double hi = static_cast<double>(std::numeric_limits<To>::max());
    const double t = std::trunc(static_cast<double>(v));
    if (t <= lo) return std::numeric_limits<To>::lowest();
    if (t >= hi) return std::numeric_limits<To>::max();
    return static_cast<To>(t);
  } else {
    return static_cast<To>(v);
  }
}

template <typename To, typename From>
void cast_run(const void* x, void* y, int64_t n) {
  const From* src = static_cast<const From*>(x);
  if constexpr (std::is_same_v<To, bool>) {
    uint8_t* dst = static_cast<uint8_t*>(y);
    for (int64_t i = 0; i < n; ++i) dst[i] = convert<bool>(src[i]) ? 1 : 0;
  } else {
    To* dst = static_cast<To*>(y);
    for (int64_t i = 0; i < n; ++i) dst[i] = convert<To>(src[i]);
  }
}

using CastFn = void (*)(const void*, void*, int64_t);

// Bool reads as uint8_t (0 or 1).
template <typename To>
CastFn from(int32_t t) {
  switch (t) {
    case TSR_DTYPE_FLOAT32:
      return cast_run<To, float>;
    case TSR_DTYPE_INT32:
      return cast_run<To, int32_t>;
    case TSR_DTYPE_INT64:
      return cast_run<To, int64_t>;
    case TSR_DTYPE_INT8:
      return cast_run<To, int8_t>;
    default:
      return cast_run<To, uint8_t>;  // uint8, bool
  }
}

CastFn cast_fn(int32_t to, int32_t src) {
  switch (to) {
    case TSR_DTYPE_FLOAT32:
      return from<float>(src);
    case TSR_DTYPE_INT32:
      return from<int32_t>(src);
    case TSR_DTYPE_INT64:
      return from<int64_t>(src);
    case TSR_DTYPE_INT8:
      return from<int8_t>(src);
    case TSR_DTYPE_UINT8:
      return from<uint8_t>(src);
    default:
      return from<bool>(src);
  }
}

}  // namespace

std::string query_cast(const RegionView& region, const NodeView& node) {
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* y = node.output(0);
  if (x == nullptr || y == nullptr || numel(*x) != numel(*y)) {
    return "input and output must have the same element count";
  }
  if (x->dtype == TSR_DTYPE_FLOAT32 && y->dtype == TSR_DTYPE_FLOAT32) {
    return query_view(region, node);
  }
  if (!castable(x->dtype) || !castable(y->dtype)) {
    return "only float32, int32, int64, int8, uint8 and bool are implemented";
  }
  return "";
}

Step build_cast(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  const tsr_tensor* y = ctx.node.output(0);
  if (x->dtype == TSR_DTYPE_FLOAT32 && y->dtype == TSR_DTYPE_FLOAT32) return build_view(ctx);
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  const int64_t n = numel(*y);
  if (x->dtype == y->dtype) {
    const size_t bytes = plugin::tensor_nbytes(*y);
    return [=](std::vector<float*>& v) {
      if (v[out] != v[in]) std::memcpy(v[out], v[in], bytes);
    };
  }
  const CastFn fn = cast_fn(y->dtype, x->dtype);
  return [=](std::vector<float*>& v) { fn(v[in], v[out], n); };
}

}  // namespace tessera::cpu
