// MatMul (ONNX opsets 1-13): numpy.matmul on float32. A 1-D A is a row vector and a 1-D B a
// column vector (the added dim is dropped from the output); batch dims (all but the last two)
// broadcast numpy-style.
#include <string>
#include <vector>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/broadcast.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

struct MatMulShapes {
  Shape a_batch, b_batch, y_batch;
  int64_t m = 0, k = 0, n = 0;
  Shape y;
};

MatMulShapes matmul_shapes(const Shape& a_in, const Shape& b_in, const std::string& where) {
  if (a_in.empty() || b_in.empty()) {
    throw Error(where + ": MatMul inputs must have rank >= 1, got " + shape_str(a_in) + " and " +
                shape_str(b_in));
  }
  Shape a = a_in, b = b_in;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  MatMulShapes s;
  s.m = a[a.size() - 2];
  s.k = a[a.size() - 1];
  s.n = b[b.size() - 1];
  if (b[b.size() - 2] != s.k) {
    throw Error(where + ": inner dims differ: A " + shape_str(a_in) +
                " has K = " + std::to_string(s.k) + " but B " + shape_str(b_in) +
                " has K = " + std::to_string(b[b.size() - 2]));
  }
  s.a_batch.assign(a.begin(), a.end() - 2);
  s.b_batch.assign(b.begin(), b.end() - 2);
  s.y_batch = broadcast_shapes(s.a_batch, s.b_batch, where);
  s.y = s.y_batch;
  if (a_in.size() > 1) s.y.push_back(s.m);
  if (b_in.size() > 1) s.y.push_back(s.n);
  return s;
}

void infer_mat_mul(InferContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(0, {DType::kFloat32});
  ctx.expect_dtype(1, {DType::kFloat32});
  const MatMulShapes s = matmul_shapes(ctx.input(0).shape, ctx.input(1).shape, ctx.where);
  ctx.outputs.at(0) = {DType::kFloat32, s.y};
}

void compute_mat_mul(ComputeContext& ctx) {
  const Tensor& at = ctx.input(0);
  const Tensor& bt = ctx.input(1);
  const MatMulShapes s = matmul_shapes(at.shape(), bt.shape(), node_where(ctx.node));
  const BroadcastIndexer a_index(s.a_batch, s.y_batch);
  const BroadcastIndexer b_index(s.b_batch, s.y_batch);
  const float* a = at.data<float>();
  const float* b = bt.data<float>();
  float* y = ctx.outputs[0].data<float>();
  const int64_t batches = shape_numel(s.y_batch);
  for (int64_t bi = 0; bi < batches; ++bi) {
    const float* a_mat = a + a_index.offset(bi) * s.m * s.k;
    const float* b_mat = b + b_index.offset(bi) * s.k * s.n;
    float* y_mat = y + bi * s.m * s.n;
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t j = 0; j < s.n; ++j) {
        double sum = 0.0;
        for (int64_t p = 0; p < s.k; ++p) {
          sum += static_cast<double>(a_mat[i * s.k + p]) * b_mat[p * s.n + j];
        }
        y_mat[i * s.n + j] = static_cast<float>(sum);
      }
    }
  }
}

}  // namespace

TESSERA_REGISTER_OP("MatMul", infer_mat_mul, compute_mat_mul);

}  // namespace tessera::ops
