// Softmax over the last axis, one task per row (max-subtracted for stability).
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

#include "ops/op.hpp"

namespace tessera::cpu {

std::string query_softmax(const RegionView& region, const NodeView& node) {
  const tsr_tensor* x = node.input(0);
  if (!is_f32(x) || !is_f32(node.output(0))) return "only float32 is implemented";
  if (x->rank < 1) return "scalar input";
  int64_t axis = node.attr_int("axis", region.opset() >= 13 ? -1 : 1);
  if (axis < 0) axis += x->rank;
  // Before opset 13 the input is coerced to 2-D at `axis`; that equals last-axis Softmax only
  // when axis is the last one.
  if (axis != x->rank - 1) return "only Softmax over the last axis is implemented";
  return "";
}

Step build_softmax(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  const int64_t cols = x->dims[x->rank - 1];
  const int64_t rows = numel(*x) / std::max<int64_t>(1, cols);
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  return [=](std::vector<float*>& v) {
    tbb::parallel_for(int64_t{0}, rows, [&](int64_t r) {
      const float* src = v[in] + r * cols;
      float* dst = v[out] + r * cols;
      const float mx = *std::max_element(src, src + cols);
      float sum = 0.0f;
      for (int64_t j = 0; j < cols; ++j) sum += dst[j] = std::exp(src[j] - mx);
      const float inv = 1.0f / sum;
      for (int64_t j = 0; j < cols; ++j) dst[j] *= inv;
    });
  };
}

}  // namespace tessera::cpu
