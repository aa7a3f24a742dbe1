// LRN (local response normalisation across channels, AlexNet / GoogLeNet / CaffeNet):
// y = x / (bias + alpha / size * sum of x^2 over the channels [c - floor((size - 1) / 2),
// c + ceil((size - 1) / 2)])^beta, on float32 [N, C, ...] tensors.
#include <algorithm>
#include <cmath>

#include "op.hpp"

namespace tessera::ops {
namespace {

void infer_lrn(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DType::kFloat32});
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 3)
    ctx.fail("the input must be [N, C, D1, ...], got rank " + std::to_string(x.size()));
  if (!ctx.node.attrs.has("size")) ctx.fail("attribute 'size' is required");
  const int64_t size = ctx.node.attrs.get_int("size");
  if (size < 1) ctx.fail("attribute 'size' must be at least 1, got " + std::to_string(size));
  ctx.node.attrs.get_float("alpha", 1e-4f);
  ctx.node.attrs.get_float("beta", 0.75f);
  ctx.node.attrs.get_float("bias", 1.0f);
  ctx.outputs[0] = {DType::kFloat32, x};
}

void compute_lrn(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Shape& s = x.shape();
  const int64_t size = ctx.node.attrs.get_int("size");
  const double alpha = ctx.node.attrs.get_float("alpha", 1e-4f);
  const double beta = ctx.node.attrs.get_float("beta", 0.75f);
  const double bias = ctx.node.attrs.get_float("bias", 1.0f);
  const int64_t n = s[0], c = s[1];
  int64_t inner = 1;
  for (size_t d = 2; d < s.size(); ++d) inner *= s[d];
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  const float* in = x.data<float>();
  float* out = ctx.outputs[0].data<float>();
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t lo = std::max<int64_t>(0, ch - before), hi = std::min(c - 1, ch + after);
      for (int64_t i = 0; i < inner; ++i) {
        double sum = 0.0;
        for (int64_t k = lo; k <= hi; ++k) {
          const double v = in[(b * c + k) * inner + i];
          sum += v * v;
        }
        const int64_t at = (b * c + ch) * inner + i;
        out[at] = static_cast<float>(
            in[at] / std::pow(bias + alpha / static_cast<double>(size) * sum, beta));
      }
    }
  }
}

}  // namespace

TESSERA_REGISTER_OP("LRN", infer_lrn, compute_lrn);

}  // namespace tessera::ops
