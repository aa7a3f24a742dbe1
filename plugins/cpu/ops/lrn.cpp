// LRN across channels on float32 [N, C, ...]: per output channel plane, the window's sums of
// squares (a run of vector adds over the planes) then y = x * (bias + alpha / size * s)^-beta in
// one SIMD pass (kernels/elementwise.cpp).
#include <tbb/parallel_for.h>

#include <algorithm>
#include <vector>

#include "ops/op.hpp"

namespace tessera::cpu {

std::string query_lrn(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  if (!is_f32(x) || !is_f32(node.output(0))) return "only float32 is implemented";
  if (x->rank < 3) return "the input must be [N, C, D1, ...]";
  if (node.attr_int("size", 0) < 1) return "attribute 'size' must be at least 1";
  // The kernel takes (bias + a s)^-beta as e^(-beta log(...)), which needs a positive base.
  if (node.attr_float("bias", 1.0f) <= 0.0f) return "a bias of 0 or less is not implemented";
  if (node.attr_float("alpha", 1e-4f) < 0.0f) return "a negative alpha is not implemented";
  return "";
}

Step build_lrn(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  const int64_t size = ctx.node.attr_int("size", 1);
  const float alpha = ctx.node.attr_float("alpha", 1e-4f);
  const float beta = ctx.node.attr_float("beta", 0.75f);
  const float bias = ctx.node.attr_float("bias", 1.0f);
  const int64_t n = x->dims[0], c = x->dims[1];
  const int64_t inner = numel(*x) / std::max<int64_t>(1, n * c);
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  const float a = alpha / static_cast<float>(size);
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  return [=](std::vector<float*>& v) {
    tbb::parallel_for(int64_t{0}, n * c, [&](int64_t plane) {
      static thread_local std::vector<float> sums;
      sums.assign(static_cast<size_t>(inner), 0.0f);
      const int64_t b = plane / c, ch = plane % c;
      const int64_t lo = std::max<int64_t>(0, ch - before), hi = std::min(c - 1, ch + after);
      for (int64_t k = lo; k <= hi; ++k) {
        const float* p = v[in] + (b * c + k) * inner;
        for (int64_t i = 0; i < inner; ++i) sums[static_cast<size_t>(i)] += p[i] * p[i];
      }
      lrn_scale_run(sums.data(), v[in] + plane * inner, inner, bias, a, beta,
                    v[out] + plane * inner);
    });
  };
}

}  // namespace tessera::cpu
