// Trilu (opset 14): the upper (upper = 1, the default) or lower triangle of the last two dims,
// other elements zero; k (an optional int64 scalar) shifts the diagonal: upper keeps j - i >= k,
// lower keeps j - i <= k. Any dtype. torch.triu / torch.tril export it, often over constants that
// fold at load (causal attention masks).
#include <algorithm>
#include <cstring>

#include "op.hpp"

namespace tessera::ops {
namespace {

void infer_trilu(InferContext& ctx) {
  ctx.expect_inputs(1, 2);
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 2) ctx.fail("the input must have rank >= 2, got " + shape_str(x));
  if (ctx.has_input(1)) {
    ctx.expect_dtype(1, {DType::kInt64});
    if (shape_numel(ctx.input(1).shape) != 1) ctx.fail("k must be a scalar");
    ctx.constant_input(1);
  }
  ctx.outputs[0] = {ctx.input(0).dtype, x};
}

void compute_trilu(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Shape& s = x.shape();
  const int64_t k = ctx.has_input(1) ? ctx.input(1).to_int64_vector().at(0) : 0;
  const bool upper = ctx.node.attrs.get_int("upper", 1) != 0;
  const int64_t rows = s[s.size() - 2], cols = s.back();
  const int64_t mats = x.numel() / std::max<int64_t>(1, rows * cols);
  const size_t bytes = dtype_size(x.dtype());
  const auto* src = static_cast<const std::byte*>(x.raw());
  auto* dst = static_cast<std::byte*>(ctx.outputs[0].raw());
  std::memset(dst, 0, static_cast<size_t>(x.numel()) * bytes);
  for (int64_t m = 0; m < mats; ++m) {
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        if (upper ? j - i >= k : j - i <= k) {
          const size_t at = static_cast<size_t>((m * rows + i) * cols + j) * bytes;
          std::memcpy(dst + at, src + at, bytes);
        }
      }
    }
  }
}

}  // namespace

TESSERA_REGISTER_OP("Trilu", infer_trilu, compute_trilu);

}  // namespace tessera::ops
