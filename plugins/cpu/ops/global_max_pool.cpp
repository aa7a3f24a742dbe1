// GlobalMaxPool (float32, [N, C, spatial...]): the SIMD max of each plane, planes in parallel.
#include <tbb/parallel_for.h>

#include "ops/op.hpp"

namespace tessera::cpu {

std::string query_global_max_pool(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  if (!is_f32(x) || !is_f32(node.output(0))) return "only float32 is implemented";
  if (x->rank < 3) return "input must have spatial axes";
  if (numel(*x) == 0) return "empty input";
  return "";
}

Step build_global_max_pool(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  const int64_t planes = x->dims[0] * x->dims[1];
  const int64_t inner = numel(*x) / planes;
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  return [=](std::vector<float*>& v) {
    tbb::parallel_for(int64_t{0}, planes, [&](int64_t p) {
      v[out][p] = reduce_run(ReduceOp::kMax, v[in] + p * inner, inner);
    });
  };
}

}  // namespace tessera::cpu
