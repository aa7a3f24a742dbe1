// InstanceNormalization and GroupNormalization (float32, [N, C, spatial...]): each group of C / G
// consecutive channels of an image is one contiguous row, normalised with the LayerNorm row's
// statistics (norm_moments) and then scaled and shifted channel by channel in one pass
// (y = x * a + b with a = scale * inv_std, b = bias - mean * a). InstanceNorm is G = C. Groups run
// in parallel.
#include <tbb/parallel_for.h>

#include <memory>

#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

struct NormShape {
  int64_t batch = 1, channels = 1, spatial = 1, groups = 1;
  bool per_group_params = false;  // GroupNormalization before opset 21: one scale per group
};

NormShape norm_shape(const RegionView& region, const NodeView& node) {
  const tsr_tensor* x = node.input(0);
  NormShape s;
  s.batch = x->dims[0];
  s.channels = x->dims[1];
  s.spatial = 1;
  for (int64_t d = 2; d < x->rank; ++d) s.spatial *= x->dims[d];
  const bool instance = node.op_type() == "InstanceNormalization";
  s.groups = instance ? s.channels : node.attr_int("num_groups", 0);
  s.per_group_params = !instance && region.opset() < 21;
  return s;
}

}  // namespace

std::string query_group_norm(const RegionView& region, const NodeView& node) {
  const tsr_tensor* x = node.input(0);
  if (!is_f32(x) || !is_f32(node.output(0))) return "only float32 is implemented";
  if (x->rank < 2) return "input must be [N, C, ...]";
  const NormShape s = norm_shape(region, node);
  if (s.groups <= 0 || s.channels % s.groups != 0) return "num_groups must divide the channels";
  const int64_t params = s.per_group_params ? s.groups : s.channels;
  for (int32_t i = 1; i <= 2; ++i) {
    const tsr_tensor* t = node.input(i);
    if (!is_f32(t) || numel(*t) != params) return "scale and bias must be float32 vectors";
  }
  if (s.spatial == 0 || numel(*x) == 0) return "empty input";
  return "";
}

Step build_group_norm(BuildContext& ctx) {
  const NormShape s = norm_shape(ctx.region, ctx.node);
  const float eps = ctx.node.attr_float("epsilon", 1e-5f);
  const int64_t per_group = s.channels / s.groups;
  const int64_t row = per_group * s.spatial;
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  const int32_t scale = ctx.node.input_index(1), bias = ctx.node.input_index(2);
  return [=](std::vector<float*>& v) {
    const float* sc = v[scale];
    const float* bi = v[bias];
    tbb::parallel_for(int64_t{0}, s.batch * s.groups, [&](int64_t r) {
      const int64_t grp = r % s.groups;
      const float* x = v[in] + r * row;
      float* y = v[out] + r * row;
      float mean, inv;
      norm_moments(x, row, eps, &mean, &inv);
      for (int64_t k = 0; k < per_group; ++k) {
        const int64_t c = grp * per_group + k;
        const int64_t p = s.per_group_params ? grp : c;
        const float a = sc[p] * inv;
        scale_shift_run(x + k * s.spatial, s.spatial, a, bi[p] - mean * a, y + k * s.spatial);
      }
    });
  };
}

}  // namespace tessera::cpu
