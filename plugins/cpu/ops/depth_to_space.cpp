// DepthToSpace (NCHW, float32) as one strided copy: the input read as [N, b, b, C/b^2, H, W]
// (DCR) or [N, C/b^2, b, b, H, W] (CRD) and written as [N, C/b^2, H, b, W, b].
#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {

std::string query_depth_to_space(const RegionView& region, const NodeView& node) {
  const tsr_tensor* x = node.input(0);
  if (!is_f32(x) || !is_f32(node.output(0))) return "only float32 is implemented";
  if (x->rank != 4) return "input must be NCHW";
  const int64_t b = node.attr_int("blocksize", 0);
  if (b <= 0 || x->dims[1] % (b * b) != 0) return "blocksize squared must divide the channels";
  const std::string mode = region.opset() >= 11 ? node.attr_string("mode", "DCR") : "DCR";
  if (mode != "DCR" && mode != "CRD") return "mode must be DCR or CRD";
  return "";
}

Step build_depth_to_space(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  const int64_t n = x->dims[0], c = x->dims[1], h = x->dims[2], w = x->dims[3];
  const int64_t b = ctx.node.attr_int("blocksize", 1), co = c / (b * b);
  const bool crd =
      ctx.region.opset() >= 11 && ctx.node.attr_string("mode", "DCR") == "CRD";
  // Input strides of the block row i, block column j and output channel c'.
  const int64_t plane = h * w;
  const int64_t si = crd ? b * plane : b * co * plane;
  const int64_t sj = crd ? plane : co * plane;
  const int64_t sc = crd ? b * b * plane : plane;
  const CopyPlan plan = merge_copy_plan({n, co, h, b, w, b}, {c * plane, sc, w, si, 1, sj}, 0);
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  return [=](std::vector<float*>& v) { strided_copy(plan, v[in], v[out]); };
}

}  // namespace tessera::cpu
