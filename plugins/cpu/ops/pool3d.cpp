// MaxPool / AveragePool over three spatial axes (NCDHW, float32; 3-D CNNs on clips or volumes).
// A 3-D window is a depth window of 2-D windows, and both its max and its average factor along
// the axes (an average window counts depth cells x plane cells, each axis clipped alone, as
// pool_scales does): each output depth slice pools its input depth slices with the 2-D kernel
// (pool2d_planes) and combines them, max or the sum scaled by 1 / (depth cells counted).
// Parallel over the (n, c) volumes; a per-thread plane holds each slice's 2-D result.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <limits>
#include <memory>

#include "ops/op.hpp"

namespace tessera::cpu {

Step build_pool3d(BuildContext& ctx) {
  const NodeView& node = ctx.node;
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* y = node.output(0);
  const std::vector<int64_t> k = node.attr_ints("kernel_shape", {});
  const std::vector<int64_t> s = node.attr_ints("strides", {1, 1, 1});
  const std::vector<int64_t> p = node.attr_ints("pads", {0, 0, 0, 0, 0, 0});
  const bool average = node.op_type() == "AveragePool";
  const bool include_pad = node.attr_int("count_include_pad", 0) != 0;
  const int64_t volumes = x->dims[0] * x->dims[1], d = x->dims[2], od = y->dims[2];
  const int64_t kd = k[0], sd = s[0], pd = p[0];
  // One plane of the 2-D pooling: the kernel runs it for one depth slice at a time.
  ConvGeometry g;
  g.c = g.oc = 1;
  g.h = x->dims[3];
  g.w = x->dims[4];
  g.oh = y->dims[3];
  g.ow = y->dims[4];
  g.kh = k[1];
  g.kw = k[2];
  g.sh = s[1];
  g.sw = s[2];
  g.pt = p[1];
  g.pl = p[2];
  auto window = std::make_shared<const PoolWindow>(
      average ? average_pool_window(g, include_pad, p[4], p[5]) : max_pool_window(g));
  const std::vector<float> depth_scale = pool_scales(od, d, kd, sd, pd, p[3], include_pad);
  const int64_t in_plane = g.h * g.w, out_plane = g.oh * g.ow;
  const int32_t in = node.input_index(0), out = ctx.output;
  const Activation act = ctx.act;
  const float inf = std::numeric_limits<float>::infinity();
  return [=](std::vector<float*>& v) {
    tbb::parallel_for(int64_t{0}, volumes, [&](int64_t vol) {
      const float* src = v[in] + vol * d * in_plane;
      float* dst = v[out] + vol * od * out_plane;
      float* slice = thread_scratch<struct Pool3dSlice>(out_plane);
      for (int64_t z = 0; z < od; ++z) {
        float* o = dst + z * out_plane;
        const int64_t t0 = std::max<int64_t>(0, z * sd - pd);
        const int64_t t1 = std::min(d, z * sd - pd + kd);
        if (t0 >= t1) {
          // A window of padding only (possible with ceil_mode): max over nothing, average 0.
          std::fill(o, o + out_plane, average ? 0.0f : -inf);
        }
        for (int64_t t = t0; t < t1; ++t) {
          float* to = t == t0 ? o : slice;
          pool2d_planes(src + t * in_plane, in_plane, *window, -inf, inf, to, out_plane, 0, 1);
          if (t == t0) continue;
          for (int64_t i = 0; i < out_plane; ++i) {
            o[i] = average ? o[i] + slice[i] : std::max(o[i], slice[i]);
          }
        }
        const float scale = average ? depth_scale[static_cast<size_t>(z)] : 1.0f;
        for (int64_t i = 0; i < out_plane; ++i) {
          o[i] = std::min(std::max(o[i] * scale, act.lo), act.hi);
        }
      }
    });
  };
}

}  // namespace tessera::cpu
