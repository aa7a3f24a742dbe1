// DequantizeLinear (opset 10+): y = (x - zero_point) * scale in float32, from uint8, int8 or int32
// (whose zero point must be 0), per tensor or per axis (opset 13+).
#include "op.hpp"
#include "util/quantize.hpp"

namespace tessera::ops {
namespace {

void infer_dequantize_linear(InferContext& ctx) {
  ctx.expect_inputs(2, 3);
  ctx.expect_dtype(0, {DType::kUInt8, DType::kInt8, DType::kInt32});
  check_quant_params(ctx, ctx.input(0).dtype);
  if (ctx.input(0).dtype == DType::kInt32 && ctx.has_input(2) && ctx.input(2).constant != nullptr) {
    const Tensor& z = *ctx.input(2).constant;
    for (int64_t i = 0; i < z.numel(); ++i) {
      if (z.data<int32_t>()[i] != 0) ctx.fail("an int32 input's zero point must be 0");
    }
  }
  ctx.outputs[0] = {DType::kFloat32, ctx.input(0).shape};
}

template <typename Q>
void dequantize(const Q* x, const float* scale, const Q* zero, const QuantLayout& layout, int64_t n,
                float* y) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = layout.index(i);
    const int64_t z = zero != nullptr ? static_cast<int64_t>(zero[c]) : 0;
    y[i] = static_cast<float>(static_cast<int64_t>(x[i]) - z) * scale[c];
  }
}

void compute_dequantize_linear(ComputeContext& ctx) {
  const InferContext ictx = context_of_constants(ctx);
  const Tensor& x = ctx.input(0);
  const QuantLayout layout = check_quant_params(ictx, x.dtype());
  const float* scale = ctx.input(1).data<float>();
  float* y = ctx.outputs[0].data<float>();
  auto run = [&](auto tag) {
    using Q = decltype(tag);
    const Q* zero = ctx.has_input(2) ? ctx.input(2).data<Q>() : nullptr;
    dequantize(x.data<Q>(), scale, zero, layout, x.numel(), y);
  };
  if (x.dtype() == DType::kInt8) {
    run(int8_t{});
  } else if (x.dtype() == DType::kUInt8) {
    run(uint8_t{});
  } else {
    run(int32_t{});
  }
}

}  // namespace

TESSERA_REGISTER_OP("DequantizeLinear", infer_dequantize_linear, compute_dequantize_linear);

}  // namespace tessera::ops
