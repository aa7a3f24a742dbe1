// BatchNormalization as a per-channel affine (with a fused Relu/Clip) where it could not be folded
// into a Conv.
#include <tbb/parallel_for.h>

#include <cmath>
#include <memory>

#include "ops/op.hpp"

namespace tessera::cpu {

std::string query_batch_norm(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  if (!is_f32(x) || !is_f32(node.output(0))) return "only float32 is implemented";
  if (x->rank < 2) return "input must have a channel axis";
  if (node.num_outputs() > 1 && node.output_index(1) >= 0)
    return "training outputs are not implemented";
  if (node.attr_int("training_mode", 0) != 0) return "training_mode is not implemented";
  for (int32_t i = 1; i <= 4; ++i) {
    const tsr_tensor* t = node.input(i);
    if (constant_f32(t) == nullptr || numel(*t) != x->dims[1]) {
      return "scale, bias, mean and var must be float32 constants of C values";
    }
  }
  return "";
}

Step build_batch_norm(BuildContext& ctx) {
  const NodeView& node = ctx.node;
  const tsr_tensor* x = node.input(0);
  const int64_t c = x->dims[1];
  int64_t inner = 1;
  for (int32_t d = 2; d < x->rank; ++d) inner *= x->dims[d];
  const int64_t outer = x->dims[0];
  auto scale = std::make_shared<std::vector<float>>(static_cast<size_t>(c));
  auto shift = std::make_shared<std::vector<float>>(static_cast<size_t>(c));
  const float* gamma = constant_f32(node.input(1));
  const float* beta = constant_f32(node.input(2));
  const float* mean = constant_f32(node.input(3));
  const float* var = constant_f32(node.input(4));
  const float eps = node.attr_float("epsilon", 1e-5f);
  for (int64_t i = 0; i < c; ++i) {
    (*scale)[i] = gamma[i] / std::sqrt(var[i] + eps);
    (*shift)[i] = beta[i] - mean[i] * (*scale)[i];
  }
  const int32_t in = node.input_index(0), out = ctx.output;
  const Activation act = ctx.act;
  return [=](std::vector<float*>& v) {
    tbb::parallel_for(int64_t{0}, outer * c, [&](int64_t nc) {
      const int64_t ch = nc % c;
      const float s = (*scale)[ch], t = (*shift)[ch];
      const float* src = v[in] + nc * inner;
      float* dst = v[out] + nc * inner;
      for (int64_t i = 0; i < inner; ++i) {
        dst[i] = std::min(std::max(src[i] * s + t, act.lo), act.hi);
      }
    });
  };
}

}  // namespace tessera::cpu
