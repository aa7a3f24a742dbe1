// QuantizeLinear (opset 10+): y = saturate(round(x / scale) + zero_point), rounding half to even,
// to uint8 (the default, and with a uint8 zero point) or int8, per tensor or per axis (opset 13+).
#include <algorithm>
#include <cmath>
#include <limits>

#include "op.hpp"
#include "util/quantize.hpp"

namespace tessera::ops {
namespace {

void infer_quantize_linear(InferContext& ctx) {
  ctx.expect_inputs(2, 3);
  ctx.expect_dtype(0, {DType::kFloat32});
  DType out = DType::kUInt8;
  if (ctx.has_input(2)) {
    ctx.expect_dtype(2, {DType::kUInt8, DType::kInt8});
    out = ctx.input(2).dtype;
  }
  if (ctx.node.attrs.has("output_dtype")) {
    const int64_t want = ctx.node.attrs.get_int("output_dtype");
    if (want != 0 && want != static_cast<int64_t>(out)) {
      if (ctx.has_input(2) || (want != static_cast<int64_t>(DType::kInt8) &&
                               want != static_cast<int64_t>(DType::kUInt8))) {
        ctx.unsupported("output_dtype " + std::to_string(want) + " is not supported here");
      }
      out = static_cast<DType>(want);
    }
  }
  check_quant_params(ctx, out);
  ctx.outputs[0] = {out, ctx.input(0).shape};
}

template <typename Q>
void quantize(const float* x, const float* scale, const Q* zero, const QuantLayout& layout,
              int64_t n, Q* y) {
  constexpr float lo = static_cast<float>(std::numeric_limits<Q>::lowest());
  constexpr float hi = static_cast<float>(std::numeric_limits<Q>::max());
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = layout.index(i);
    const float z = zero != nullptr ? static_cast<float>(zero[c]) : 0.0f;
    // nearbyint rounds half to even in the default rounding mode; NaN saturates to lo.
    const float q = std::nearbyint(x[i] / scale[c]) + z;
    y[i] = static_cast<Q>(std::isnan(q) ? lo : std::min(std::max(q, lo), hi));
  }
}

void compute_quantize_linear(ComputeContext& ctx) {
  const InferContext ictx = context_of_constants(ctx);
  Tensor& y = ctx.outputs[0];
  const QuantLayout layout = check_quant_params(ictx, y.dtype());
  const Tensor& x = ctx.input(0);
  const float* scale = ctx.input(1).data<float>();
  if (y.dtype() == DType::kInt8) {
    const int8_t* zero = ctx.has_input(2) ? ctx.input(2).data<int8_t>() : nullptr;
    quantize(x.data<float>(), scale, zero, layout, x.numel(), y.data<int8_t>());
  } else {
    const uint8_t* zero = ctx.has_input(2) ? ctx.input(2).data<uint8_t>() : nullptr;
    quantize(x.data<float>(), scale, zero, layout, x.numel(), y.data<uint8_t>());
  }
}

}  // namespace

TESSERA_REGISTER_OP("QuantizeLinear", infer_quantize_linear, compute_quantize_linear);

}  // namespace tessera::ops
