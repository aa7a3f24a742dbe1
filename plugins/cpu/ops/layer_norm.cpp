// LayerNormalization (opset 17) on float32 as one kernel per row: mean, variance, normalise,
// scale and bias over the trailing axes from `axis`, rows in parallel.
#include <tbb/parallel_for.h>

#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {

std::string query_layer_norm(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  if (!is_f32(x) || !is_f32(node.output(0))) return "only float32 is implemented";
  for (int32_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output_index(i) >= 0) return "the Mean and InvStdDev outputs are not implemented";
  }
  const int64_t axis = normalize_axis(node.attr_int("axis", -1), x->rank);
  if (axis < 0) return "axis out of range";
  int64_t row = 1;
  for (int64_t d = axis; d < x->rank; ++d) row *= x->dims[d];
  for (int32_t i = 1; i <= 2; ++i) {
    const tsr_tensor* t = node.input(i);
    if (t == nullptr) continue;
    if (!is_f32(t) || numel(*t) != row) {
      return "scale and bias must be float32 with one value per normalised element";
    }
  }
  if (row == 0) return "empty rows";
  return "";
}

Step build_layer_norm(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  const int64_t axis = normalize_axis(ctx.node.attr_int("axis", -1), x->rank);
  int64_t row = 1;
  for (int64_t d = axis; d < x->rank; ++d) row *= x->dims[d];
  const int64_t rows = numel(*x) / row;
  const float eps = ctx.node.attr_float("epsilon", 1e-5f);
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  const int32_t scale = ctx.node.input_index(1), bias = ctx.node.input_index(2);
  return [=](std::vector<float*>& v) {
    const float* s = scale >= 0 ? v[scale] : nullptr;
    const float* b = bias >= 0 ? v[bias] : nullptr;
    tbb::parallel_for(int64_t{0}, rows, [&](int64_t r) {
      layer_norm_run(v[in] + r * row, row, s, b, eps, v[out] + r * row);
    });
  };
}

}  // namespace tessera::cpu
