// Hardmax (opset 13: along 'axis', default -1; before 13: over the flattened [axis:] dims, default
// 1): 1 at the first largest element (the first NaN if any), 0 elsewhere. float32 and float16.
#include <algorithm>
#include <cmath>

#include "op.hpp"
#include "util/axes.hpp"

namespace tessera::ops {
namespace {

void infer_hardmax(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DType::kFloat32, DType::kFloat16});
  const Shape& x = ctx.input(0).shape;
  normalize_axis(ctx.node.attrs.get_int("axis", ctx.opset >= 13 ? -1 : 1),
                 static_cast<int64_t>(x.size()), ctx.where);
  ctx.outputs[0] = {ctx.input(0).dtype, x};
}

void compute_hardmax(ComputeContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const Shape& s = xt.shape();
  const int64_t rank = xt.rank();
  const int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", ctx.opset >= 13 ? -1 : 1),
                                      rank, node_where(ctx.node));
  // Opset 13 picks along one axis ([outer, n, inner]); older opsets over [outer, rest].
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t e = s[static_cast<size_t>(d)];
    if (d < axis) {
      outer *= e;
    } else if (d == axis || ctx.opset < 13) {
      n *= e;
    } else {
      inner *= e;
    }
  }
  const std::vector<float> x = xt.to_float_vector();
  std::vector<float> y(x.size(), 0.0f);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * n * inner + i;
      int64_t best = 0;
      // The first largest, a NaN counting as larger than every number (numpy's argmax).
      for (int64_t j = 1; j < n; ++j) {
        const float v = x[static_cast<size_t>(base + j * inner)];
        const float b = x[static_cast<size_t>(base + best * inner)];
        if (!std::isnan(b) && (std::isnan(v) || v > b)) best = j;
      }
      if (n > 0) y[static_cast<size_t>(base + best * inner)] = 1.0f;
    }
  }
  Tensor& out = ctx.outputs[0];
  if (out.dtype() == DType::kFloat32) {
    std::copy(y.begin(), y.end(), out.data<float>());
  } else {
    for (size_t i = 0; i < y.size(); ++i) out.data<uint16_t>()[i] = float_to_half(y[i]);
  }
}

}  // namespace

TESSERA_REGISTER_OP("Hardmax", infer_hardmax, compute_hardmax);

}  // namespace tessera::ops
