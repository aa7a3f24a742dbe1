// MaxPool / AveragePool (2-D, NCHW; kernels/pool.cpp, parallel over blocks of (n, c) planes; 1-D
// pooling as 2-D pooling of height 1; 3-D in pool3d.cpp) and GlobalAveragePool.
#include "ops/op.hpp"

namespace tessera::cpu {

std::string query_pool(const RegionView& region, const NodeView& node) {
  if (is_int8_pool(node)) return query_pool_int8(region, node);
  const tsr_tensor* x = node.input(0);
  if (!is_f32(x) || !is_f32(node.output(0))) return "only float32 is implemented";
  // Rank 5 runs in pool3d.cpp; the attribute checks below hold for every rank.
  if (x->rank < 3 || x->rank > 5) return "only 1-D, 2-D and 3-D pooling (rank 3 to 5)";
  if (node.num_outputs() > 1 && node.output_index(1) >= 0)
    return "MaxPool Indices output is not implemented";
  const size_t axes = static_cast<size_t>(x->rank - 2);
  if (node.attr_ints("kernel_shape", {}).size() != axes) {
    return "kernel_shape must have " + std::to_string(axes) + " values";
  }
  if (node.attr_ints("strides", std::vector<int64_t>(axes, 1)).size() != axes) {
    return "strides must have " + std::to_string(axes) + " values";
  }
  if (node.attr_ints("pads", std::vector<int64_t>(2 * axes, 0)).size() != 2 * axes) {
    return "pads must have " + std::to_string(2 * axes) + " values";
  }
  for (int64_t d : node.attr_ints("dilations", {1, 1})) {
    if (d != 1) return "dilations other than 1 are not implemented";
  }
  if (node.attr_int("storage_order", 0) != 0) return "storage_order 1 is not implemented";
  return "";
}

namespace {

// The window attributes with a height axis of 1 (no stride, no pads) in front for 1-D pooling
// (NCL is NC1L in memory); pads as {top, left, bottom, right}.
struct PoolAttrs {
  std::vector<int64_t> k, s, p;
};

PoolAttrs pool_attrs(const NodeView& node) {
  const bool one_d = node.input(0)->rank == 3;
  const size_t axes = one_d ? 1 : 2;
  PoolAttrs a{node.attr_ints("kernel_shape", {}),
              node.attr_ints("strides", std::vector<int64_t>(axes, 1)),
              node.attr_ints("pads", std::vector<int64_t>(2 * axes, 0))};
  if (one_d) {
    a.k.insert(a.k.begin(), 1);
    a.s.insert(a.s.begin(), 1);
    a.p = {0, a.p[0], 0, a.p[1]};
  }
  return a;
}

}  // namespace

ConvGeometry pool_geometry(const NodeView& node) {
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* y = node.output(0);
  const bool one_d = x->rank == 3;
  const PoolAttrs a = pool_attrs(node);
  const std::vector<int64_t>&k = a.k, &s = a.s, &p = a.p;
  ConvGeometry g;
  g.c = g.oc = x->dims[0] * x->dims[1];
  g.h = one_d ? 1 : x->dims[2];
  g.w = x->dims[x->rank - 1];
  g.oh = one_d ? 1 : y->dims[2];
  g.ow = y->dims[y->rank - 1];
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
  if (node.input(0)->rank == 5) return build_pool3d(ctx);
  const ConvGeometry g = pool_geometry(node);
  PoolWindow window;
  if (node.op_type() == "MaxPool") {
    window = max_pool_window(g);
  } else {
    const std::vector<int64_t> p = pool_attrs(node).p;  // p[2], p[3]: bottom, right
    window = average_pool_window(g, node.attr_int("count_include_pad", 0) != 0, p[2], p[3]);
  }
  const int32_t in = node.input_index(0), out = ctx.output;
  const Activation act = ctx.act;
  return [=](std::vector<float*>& v) { pool2d(v[in], window, act.lo, act.hi, v[out]); };
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
