// Cast and CastLike's conversion: float to integer truncates toward zero, values out of the
// target's range saturate and NaN becomes 0 (ONNX leaves both undefined; C++ would be undefined
// too); integer narrowing wraps like numpy; anything to bool is "!= 0". Header-only like the
// other op helpers.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "../op.hpp"
#include "elementwise.hpp"

namespace tessera::ops {

// Float to integer type T: truncate, saturate, NaN -> 0.
template <typename T>
inline T float_to_int(double v) {
  if (std::isnan(v)) return T{0};
  const double t = std::trunc(v);
  if (t <= static_cast<double>(std::numeric_limits<T>::lowest())) {
    return std::numeric_limits<T>::lowest();
  }
  // 2^63 as a double is above int64 max, so compare with >= on the exact power of two.
  if (t >= std::ldexp(1.0, std::numeric_limits<T>::digits)) return std::numeric_limits<T>::max();
  return static_cast<T>(t);
}

template <typename Out>
inline Out convert_from_float(double v) {
  if constexpr (std::is_same_v<Out, bool>) {
    return v != 0.0;  // NaN is true, as in numpy
  } else if constexpr (std::is_same_v<Out, float>) {
    return static_cast<float>(v);
  } else if constexpr (std::is_same_v<Out, uint16_t>) {
    return float_to_half(static_cast<float>(v));
  } else {
    return float_to_int<Out>(v);
  }
}

template <typename Out>
inline Out convert_from_int(int64_t v) {
  if constexpr (std::is_same_v<Out, bool>) {
    return v != 0;
  } else if constexpr (std::is_same_v<Out, float>) {
    return static_cast<float>(v);
  } else if constexpr (std::is_same_v<Out, uint16_t>) {
    return float_to_half(static_cast<float>(v));
  } else {
    return static_cast<Out>(v);  // modular, like numpy's astype
  }
}

// y (allocated with the target dtype and x's shape) = x converted element by element.
inline void cast_values(const Tensor& x, Tensor& y, const std::string& where) {
  dispatch_dtype(y.dtype(), where, [&](auto out_tag) {
    using Out = decltype(out_tag);
    Out* out = y.data<Out>();
    if (x.dtype() == DType::kFloat32 || x.dtype() == DType::kFloat16) {
      const std::vector<float> in = x.to_float_vector();
      for (int64_t i = 0; i < x.numel(); ++i)
        out[i] = convert_from_float<Out>(in[static_cast<size_t>(i)]);
    } else {
      const std::vector<int64_t> in = x.to_int64_vector();
      for (int64_t i = 0; i < x.numel(); ++i)
        out[i] = convert_from_int<Out>(in[static_cast<size_t>(i)]);
    }
  });
}

}  // namespace tessera::ops
