// Relu: y = max(x, 0). Float32/float16, and the integer types added in opset 14.
#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_relu(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0,
                   {DType::kFloat32, DType::kFloat16, DType::kInt32, DType::kInt64, DType::kInt8});
  ctx.outputs[0] = {ctx.input(0).dtype, ctx.input(0).shape};
}

template <typename T>
void relu_int(const Tensor& x, Tensor& y) {
  const T* in = x.data<T>();
  T* out = y.data<T>();
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] > 0 ? in[i] : T{0};
}

void compute_relu(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  switch (x.dtype()) {
    case DType::kInt32:
      return relu_int<int32_t>(x, ctx.outputs[0]);
    case DType::kInt64:
      return relu_int<int64_t>(x, ctx.outputs[0]);
    case DType::kInt8:
      return relu_int<int8_t>(x, ctx.outputs[0]);
    default:
      break;
  }
  // x > 0 ? x : 0 keeps NaN as 0 like max(x, 0) in C; the spec leaves NaN open.
  compute_float_activation(ctx, [](float v) { return v > 0.0f ? v : 0.0f; });
}

}  // namespace

TESSERA_REGISTER_OP("Relu", infer_relu, compute_relu);

}  // namespace tessera::ops
