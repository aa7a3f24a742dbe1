// Gemm (ONNX opsets 7-13): Y = alpha * op(A) * op(B) + beta * C for 2-D float32 A and B, where
// op transposes when transA / transB is 1 and C (optional from opset 11; accepted as optional at
// every opset) broadcasts one way to [M, N].
#include <string>
#include <vector>

#include "op.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

void infer_gemm(InferContext& ctx) {
  ctx.expect_inputs(2, 3);
  ctx.expect_dtype(0, {DType::kFloat32});
  ctx.expect_dtype(1, {DType::kFloat32});
  const Shape& a = ctx.input(0).shape;
  const Shape& b = ctx.input(1).shape;
  if (a.size() != 2 || b.size() != 2) {
    ctx.fail("A and B must be 2-D, got A " + shape_str(a) + " and B " + shape_str(b));
  }
  const bool trans_a = attr_bool(ctx, "transA", false);
  const bool trans_b = attr_bool(ctx, "transB", false);
  attr_float(ctx, "alpha", 1.0f);
  attr_float(ctx, "beta", 1.0f);
  if (ctx.node.attrs.has("broadcast") && ctx.opset >= 7) {
    ctx.fail("attribute 'broadcast' was removed in opset 7 (broadcasting is always on)");
  }
  const int64_t m = trans_a ? a[1] : a[0];
  const int64_t k = trans_a ? a[0] : a[1];
  const int64_t kb = trans_b ? b[1] : b[0];
  const int64_t n = trans_b ? b[0] : b[1];
  if (k != kb) {
    ctx.fail("inner dims differ: op(A) is [" + std::to_string(m) + ", " + std::to_string(k) +
             "] and op(B) is [" + std::to_string(kb) + ", " + std::to_string(n) + "] (transA = " +
             std::to_string(trans_a) + ", transB = " + std::to_string(trans_b) + ")");
  }
  if (ctx.has_input(2)) {
    ctx.expect_dtype(2, {DType::kFloat32});
    const Shape& c = ctx.input(2).shape;
    const Shape y = {m, n};
    bool ok = c.size() <= 2;
    for (size_t i = 0; ok && i < c.size(); ++i) {
      const int64_t target = y[2 - c.size() + i];
      ok = c[i] == target || c[i] == 1;
    }
    if (!ok) {
      ctx.fail("C has shape " + shape_str(c) + " which does not broadcast to the output " +
               shape_str(y) + " (unidirectional: each trailing dim must equal it or be 1)");
    }
  }
  ctx.outputs.at(0) = {DType::kFloat32, {m, n}};
}

void compute_gemm(ComputeContext& ctx) {
  const Tensor& at = ctx.input(0);
  const Tensor& bt = ctx.input(1);
  const bool trans_a = ctx.node.attrs.get_int("transA", 0) == 1;
  const bool trans_b = ctx.node.attrs.get_int("transB", 0) == 1;
  const double alpha = ctx.node.attrs.get_float("alpha", 1.0f);
  const double beta = ctx.node.attrs.get_float("beta", 1.0f);
  const Shape& y = ctx.outputs[0].shape();
  const int64_t m = y[0], n = y[1];
  const int64_t k = trans_a ? at.shape()[0] : at.shape()[1];
  const int64_t a_cols = at.shape()[1];
  const int64_t b_cols = bt.shape()[1];
  const float* a = at.data<float>();
  const float* b = bt.data<float>();
  float* yd = ctx.outputs[0].data<float>();

  const float* c = nullptr;
  int64_t c_row_stride = 0, c_col_stride = 0;  // 0 along a broadcast (size-1 or missing) dim
  if (ctx.has_input(2)) {
    const Tensor& ct = ctx.input(2);
    c = ct.data<float>();
    Shape cs = ct.shape();
    while (cs.size() < 2) cs.insert(cs.begin(), 1);
    c_row_stride = cs[0] == 1 ? 0 : cs[1];
    c_col_stride = cs[1] == 1 ? 0 : 1;
  }
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        const float av = trans_a ? a[p * a_cols + i] : a[i * a_cols + p];
        const float bv = trans_b ? b[j * b_cols + p] : b[p * b_cols + j];
        sum += static_cast<double>(av) * bv;
      }
      double out = alpha * sum;
      if (c) out += beta * c[i * c_row_stride + j * c_col_stride];
      yd[i * n + j] = static_cast<float>(out);
    }
  }
}

}  // namespace

TESSERA_REGISTER_OP("Gemm", infer_gemm, compute_gemm);

}  // namespace tessera::ops
