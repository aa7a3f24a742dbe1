// MaxPool / AveragePool (2-D, NCHW) and GlobalAveragePool, parallel over (n, c) planes. MaxPool
// with horizontal stride 1 or 2 runs the SIMD kernel; the rest the scalar loops here.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <limits>

#include "ops/op.hpp"

namespace tessera::cpu {

std::string query_pool(const RegionView& region, const NodeView& node) {
  if (is_int8_pool(node)) return query_pool_int8(region, node);
  const tsr_tensor* x = node.input(0);
  if (!is_f32(x) || !is_f32(node.output(0))) return "only float32 is implemented";
  if (x->rank != 4) return "only 2-D pooling (rank 4) is implemented";
  if (node.num_outputs() > 1 && node.output_index(1) >= 0)
    return "MaxPool Indices output is not implemented";
  if (node.attr_ints("kernel_shape", {}).size() != 2) return "kernel_shape must have 2 values";
  for (int64_t d : node.attr_ints("dilations", {1, 1})) {
    if (d != 1) return "dilations other than 1 are not implemented";
  }
  if (node.attr_int("ceil_mode", 0) != 0 && node.op_type() == "AveragePool") {
    return "AveragePool ceil_mode is not implemented";
  }
  if (node.attr_int("storage_order", 0) != 0) return "storage_order 1 is not implemented";
  return "";
}

ConvGeometry pool_geometry(const NodeView& node) {
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* y = node.output(0);
  const std::vector<int64_t> k = node.attr_ints("kernel_shape", {});
  const std::vector<int64_t> s = node.attr_ints("strides", {1, 1});
  const std::vector<int64_t> p = node.attr_ints("pads", {0, 0, 0, 0});
  ConvGeometry g;
  g.c = g.oc = x->dims[0] * x->dims[1];
  g.h = x->dims[2];
  g.w = x->dims[3];
  g.oh = y->dims[2];
  g.ow = y->dims[3];
  g.kh = k[0];
  g.kw = k[1];
  g.sh = s[0];
  g.sw = s[1];
  g.pt = p[0];
  g.pl = p[1];
  return g;
}

Step build_pool(BuildContext& ctx) {
  const NodeView& node = ctx.node;
  if (is_int8_pool(node)) return build_pool_int8(ctx);
  const std::vector<int64_t> p = node.attr_ints("pads", {0, 0, 0, 0});  // p[2], p[3]: bottom, right
  const bool is_max = node.op_type() == "MaxPool";
  const bool include_pad = node.attr_int("count_include_pad", 0) != 0;
  const ConvGeometry g = pool_geometry(node);
  const int64_t planes = g.c, h = g.h, w = g.w, oh = g.oh, ow = g.ow;
  const int32_t in = node.input_index(0), out = ctx.output;
  const Activation act = ctx.act;
  return [=](std::vector<float*>& v) {
    // The SIMD kernel pads each plane with -inf, so every window is a plain vector max.
    if (is_max && max_pool(v[in], g, act.lo, act.hi, v[out])) return;
    tbb::parallel_for(int64_t{0}, planes, [&](int64_t pl) {
      const float* src = v[in] + pl * h * w;
      float* dst = v[out] + pl * oh * ow;
      for (int64_t oy = 0; oy < oh; ++oy) {
        const int64_t y0 = oy * g.sh - g.pt, y1 = y0 + g.kh;
        const int64_t ya = std::max<int64_t>(0, y0), yb = std::min(h, y1);
        for (int64_t ox = 0; ox < ow; ++ox) {
          const int64_t x0 = ox * g.sw - g.pl, x1 = x0 + g.kw;
          const int64_t xa = std::max<int64_t>(0, x0), xb = std::min(w, x1);
          float acc = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
          for (int64_t iy = ya; iy < yb; ++iy) {
            for (int64_t ix = xa; ix < xb; ++ix) {
              acc = is_max ? std::max(acc, src[iy * w + ix]) : acc + src[iy * w + ix];
            }
          }
          if (!is_max) {
            // count_include_pad counts pad cells but never the part past the padded input.
            const int64_t cy = include_pad ? std::min(y1, h + p[2]) - y0 : yb - ya;
            const int64_t cx = include_pad ? std::min(x1, w + p[3]) - x0 : xb - xa;
            acc /= static_cast<float>(std::max<int64_t>(1, cy * cx));
          }
          dst[oy * ow + ox] = std::min(std::max(acc, act.lo), act.hi);
        }
      }
    });
  };
}

std::string query_global_average_pool(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  if (!is_f32(x) || !is_f32(node.output(0))) return "only float32 is implemented";
  if (x->rank < 3) return "input must have spatial axes";
  return "";
}

Step build_global_average_pool(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  const int64_t planes = x->dims[0] * x->dims[1];
  const int64_t inner = numel(*x) / std::max<int64_t>(1, planes);
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  const Activation act = ctx.act;
  return [=](std::vector<float*>& v) {
    global_average_pool(v[in], planes, inner, act.lo, act.hi, v[out]);
  };
}

}  // namespace tessera::cpu
