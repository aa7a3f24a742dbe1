// NonZero: the indices of the non-zero elements of X, as an int64 [rank, count] tensor in
// row-major order (numpy.nonzero stacked). Its output's size follows from X's values, so shape
// inference needs X as a constant: a graph computing X from data runs in stages (a Session binds
// X's value before planning what follows). A scalar counts as rank 1, as ONNX Runtime does.
#include <algorithm>

#include "op.hpp"

namespace tessera::ops {
namespace {

int64_t count_non_zero(const Tensor& x) {
  int64_t count = 0;
  for (int64_t i = 0; i < x.numel(); ++i) count += x.scalar_as_double(i) != 0.0 ? 1 : 0;
  return count;
}

void infer_non_zero(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DType::kFloat32, DType::kFloat16, DType::kInt64, DType::kInt32,
                       DType::kInt8, DType::kUInt8, DType::kBool});
  const Tensor& x = ctx.constant_input(0);
  const auto rank = static_cast<int64_t>(std::max<size_t>(x.shape().size(), 1));
  ctx.outputs[0] = {DType::kInt64, {rank, count_non_zero(x)}};
}

void compute_non_zero(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.outputs[0];
  const Shape& shape = x.shape();
  const auto rank = static_cast<int64_t>(shape.size());
  const int64_t count = y.shape()[1];
  int64_t* out = y.data<int64_t>();
  int64_t k = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (x.scalar_as_double(i) == 0.0) continue;
    // Row-major unravel of i, written down column k of the [rank, count] result.
    int64_t rest = i;
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t dim = shape[static_cast<size_t>(d)];
      out[d * count + k] = dim > 0 ? rest % dim : 0;
      rest = dim > 0 ? rest / dim : 0;
    }
    if (rank == 0) out[k] = 0;
    ++k;
  }
}

}  // namespace

TESSERA_REGISTER_OP("NonZero", infer_non_zero, compute_non_zero);

}  // namespace tessera::ops
