// Cast: converts between float32, float16, int64, int32, int8, uint8 and bool ('to' is an ONNX
// TensorProto data type). Float to integer truncates toward zero; values out of the target's
// range saturate and NaN becomes 0 (ONNX leaves both undefined; C++ would be undefined too).
// Integer narrowing wraps like numpy. Anything to bool is "!= 0".
#include <cmath>
#include <limits>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

DType target_dtype(const Node& node, const std::string& where) {
  const int64_t to = node.attrs.get_int("to");
  if (!dtype_is_known(static_cast<int32_t>(to)) || to != static_cast<int32_t>(to)) {
    throw UnsupportedError(where + ": attribute 'to' = " + std::to_string(to) +
                           " is not a supported dtype (float32, float16, int64, int32, int8, "
                           "uint8, bool)");
  }
  return static_cast<DType>(to);
}

// Float to integer type T: truncate, saturate, NaN -> 0.
template <typename T>
T float_to_int(double v) {
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
Out convert_from_float(double v) {
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
Out convert_from_int(int64_t v) {
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

void infer_cast(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DType::kFloat32, DType::kFloat16, DType::kInt64, DType::kInt32, DType::kInt8,
                       DType::kUInt8, DType::kBool});
  ctx.outputs[0] = {target_dtype(ctx.node, ctx.where), ctx.input(0).shape};
}

void compute_cast(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.outputs[0];
  const std::string where = "node '" + ctx.node.name + "' (Cast)";
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

}  // namespace

TESSERA_REGISTER_OP("Cast", infer_cast, compute_cast);

}  // namespace tessera::ops
