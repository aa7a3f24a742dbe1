// TesseraQLinearMatMul: the int8 unit DequantizeLinear -> MatMul/Gemm -> [Relu/Clip ->]
// QuantizeLinear with a 2-D weight w of [K, N] (util/quantized_unit.hpp has its inputs and its
// requantization). x is [..., K] (a 1-D x is one row and gives [N]); each output column n has
// its own w scale and zero point when they are per channel, and its int32 bias. The oracle of
// every plugin's int8 GEMM.
#include <string>
#include <vector>

#include "op.hpp"
#include "util/quantized_unit.hpp"

namespace tessera::ops {
namespace {

struct QMatMulShape {
  int64_t rows = 1, k = 0, n = 0;
  Shape y;
};

QMatMulShape qmatmul_shape(const InferContext& ctx) {
  ctx.expect_dtype(kQX, {DType::kUInt8, DType::kInt8});
  const Shape& x = ctx.input(kQX).shape;
  const Shape& w = ctx.input(kQW).shape;
  if (x.empty() || w.size() != 2 || x.back() != w[0]) {
    ctx.fail("x " + shape_str(x) + " and w " + shape_str(w) +
             " must be [..., K] and [K, N] with the same K");
  }
  QMatMulShape s;
  s.k = w[0];
  s.n = w[1];
  s.y.assign(x.begin(), x.end() - 1);
  for (int64_t d : s.y) s.rows *= d;
  s.y.push_back(s.n);
  return s;
}

void infer_qmatmul(InferContext& ctx) {
  const QMatMulShape s = qmatmul_shape(ctx);
  const UnitParams p = unit_params(ctx, s.n);
  ctx.outputs.at(0) = {p.y_type, s.y};
}

void compute_qmatmul(ComputeContext& ctx) {
  const InferContext ictx = context_of_constants(ctx);
  const QMatMulShape s = qmatmul_shape(ictx);
  const UnitParams p = unit_params(ictx, s.n);
  const Tensor& x = ctx.input(kQX);
  const Tensor& w = ctx.input(kQW);
  Tensor& y = ctx.outputs[0];
  for (int64_t r = 0; r < s.rows; ++r) {
    for (int64_t j = 0; j < s.n; ++j) {
      int32_t acc = p.bias[j];
      for (int64_t k = 0; k < s.k; ++k) {
        acc += (quant_element(x, r * s.k + k) - p.x_zero) *
               (quant_element(w, k * s.n + j) - p.w_zero[j]);
      }
      store_quant(y, r * s.n + j, p.requant[j].apply(acc));
    }
  }
}

}  // namespace

TESSERA_REGISTER_OP(kQLinearMatMulUnit, infer_qmatmul, compute_qmatmul);

}  // namespace tessera::ops
