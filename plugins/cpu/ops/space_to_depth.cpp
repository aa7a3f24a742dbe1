// SpaceToDepth (NCHW, float32) as one strided copy: the output [N, b, b, C, H/b, W/b] reads
// x[n, c, h * b + i, w * b + j].
#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {

std::string query_space_to_depth(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  if (!is_f32(x) || !is_f32(node.output(0))) return "only float32 is implemented";
  if (x->rank != 4) return "input must be NCHW";
  const int64_t b = node.attr_int("blocksize", 0);
  if (b <= 0 || x->dims[2] % b != 0 || x->dims[3] % b != 0) {
    return "blocksize must divide the spatial dims";
  }
  return "";
}

Step build_space_to_depth(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  const int64_t n = x->dims[0], c = x->dims[1], h = x->dims[2], w = x->dims[3];
  const int64_t b = ctx.node.attr_int("blocksize", 1);
  const CopyPlan plan = merge_copy_plan({n, b, b, c, h / b, w / b},
                                        {c * h * w, w, 1, h * w, b * w, b}, 0);
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  return [=](std::vector<float*>& v) { strided_copy(plan, v[in], v[out]); };
}

}  // namespace tessera::cpu
