// Resize and Upsample of the two spatial axes of NCHW float32 tensors, nearest or (bi)linear,
// every coordinate_transformation_mode but tf_crop_and_resize. Source indices and weights are
// computed once per output row and column at compile time; the step runs planes in parallel.
#include <tbb/parallel_for.h>

#include <cmath>
#include <memory>

#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

struct Axis {
  std::vector<int64_t> i0, i1;  // source indices (equal for nearest)
  std::vector<float> w1;        // weight of i1 (linear)
};

struct ResizePlan {
  std::string mode, coord, nearest;
  float scale_h = 1.0f, scale_w = 1.0f;
  Axis rows, cols;
};

float to_input(const std::string& mode, float x, float scale, int64_t in, int64_t out) {
  if (mode == "half_pixel") return (x + 0.5f) / scale - 0.5f;
  if (mode == "pytorch_half_pixel") return out > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
  if (mode == "align_corners") {
    return out == 1 ? 0.0f : x * static_cast<float>(in - 1) / static_cast<float>(out - 1);
  }
  if (mode == "asymmetric") return x / scale;
  if (mode == "tf_half_pixel_for_nearest") return (x + 0.5f) / scale;
  // half_pixel_symmetric
  const float adjustment = static_cast<float>(out) / (scale * static_cast<float>(in));
  const float center = static_cast<float>(in) / 2.0f;
  return center * (1.0f - adjustment) + (x + 0.5f) / scale - 0.5f;
}

int64_t nearest_index(const std::string& mode, float x, bool downsampling) {
  if (mode == "opset10") return static_cast<int64_t>(downsampling ? std::ceil(x) : std::floor(x));
  if (mode == "floor") return static_cast<int64_t>(std::floor(x));
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  const float f = std::floor(x);
  if (x - f == 0.5f) return static_cast<int64_t>(mode == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::round(x));
}

Axis plan_axis(const ResizePlan& p, float scale, int64_t in, int64_t out) {
  Axis a;
  for (int64_t o = 0; o < out; ++o) {
    const float x = to_input(p.coord, static_cast<float>(o), scale, in, out);
    if (p.mode == "nearest") {
      const int64_t i = std::min(std::max<int64_t>(nearest_index(p.nearest, x, scale < 1.0f), 0),
                                 in - 1);
      a.i0.push_back(i);
      a.i1.push_back(i);
      a.w1.push_back(0.0f);
    } else {
      const float c = std::min(std::max(x, 0.0f), static_cast<float>(in - 1));
      const int64_t i0 = static_cast<int64_t>(std::floor(c));
      const int64_t i1 = std::min(i0 + 1, in - 1);
      a.i0.push_back(i0);
      a.i1.push_back(i1);
      a.w1.push_back(c - static_cast<float>(i0));
    }
  }
  return a;
}

std::string resize_plan(const RegionView& region, const NodeView& node, ResizePlan* p) {
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* y = node.output(0);
  if (x->rank != 4) return "only NCHW (rank 4) resizing is implemented";
  if (x->dims[0] != y->dims[0] || x->dims[1] != y->dims[1]) {
    return "only the spatial axes may be resized";
  }
  const bool upsample = node.op_type() == "Upsample";
  const int64_t opset = region.opset();
  p->mode = node.attr_string("mode", "nearest");
  if (p->mode == "bilinear") p->mode = "linear";
  if (p->mode != "nearest" && p->mode != "linear") return "mode '" + p->mode + "' is not implemented";
  p->coord = !upsample && opset >= 11
                 ? node.attr_string("coordinate_transformation_mode", "half_pixel")
                 : "asymmetric";
  if (p->coord == "tf_crop_and_resize") return "tf_crop_and_resize is not implemented";
  p->nearest = !upsample && opset >= 11 ? node.attr_string("nearest_mode", "round_prefer_floor")
                                        : "opset10";
  if (!upsample && opset >= 18 && node.attr_int("antialias", 0) != 0 && p->mode != "nearest") {
    return "antialias is not implemented";
  }
  // The scale the coordinate transform divides by: the given scales, else out / in.
  p->scale_h = static_cast<float>(y->dims[2]) / static_cast<float>(x->dims[2]);
  p->scale_w = static_cast<float>(y->dims[3]) / static_cast<float>(x->dims[3]);
  const int32_t scales_input = upsample || opset < 11 ? 1 : 2;
  if (upsample && opset < 9) {
    const std::vector<float> s = node.attr_floats("scales", {});
    if (s.size() == 4) {
      p->scale_h = s[2];
      p->scale_w = s[3];
    }
  } else if (const tsr_tensor* s = node.input(scales_input); s != nullptr && numel(*s) == 4) {
    const float* v = constant_f32(s);
    if (v == nullptr) return "scales must be a float32 constant";
    p->scale_h = v[2];
    p->scale_w = v[3];
  }
  if (!(p->scale_h > 0.0f) || !(p->scale_w > 0.0f)) return "scales must be > 0";
  if (x->dims[2] == 0 || x->dims[3] == 0) return "empty inputs are not implemented";
  p->rows = plan_axis(*p, p->scale_h, x->dims[2], y->dims[2]);
  p->cols = plan_axis(*p, p->scale_w, x->dims[3], y->dims[3]);
  return "";
}

}  // namespace

std::string query_resize(const RegionView& region, const NodeView& node) {
  if (!is_f32(node.input(0)) || !is_f32(node.output(0))) return "only float32 is implemented";
  ResizePlan p;
  return resize_plan(region, node, &p);
}

Step build_resize(BuildContext& ctx) {
  auto p = std::make_shared<ResizePlan>();
  resize_plan(ctx.region, ctx.node, p.get());
  const tsr_tensor* x = ctx.node.input(0);
  const tsr_tensor* y = ctx.node.output(0);
  const int64_t planes = x->dims[0] * x->dims[1];
  const int64_t ih = x->dims[2], iw = x->dims[3], oh = y->dims[2], ow = y->dims[3];
  const bool linear = p->mode == "linear";
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  return [=](std::vector<float*>& v) {
    tbb::parallel_for(int64_t{0}, planes * oh, [&](int64_t item) {
      const int64_t plane = item / oh, oy = item % oh;
      const float* src = v[in] + plane * ih * iw;
      float* dst = v[out] + (plane * oh + oy) * ow;
      const Axis& r = p->rows;
      const Axis& c = p->cols;
      const float* r0 = src + r.i0[static_cast<size_t>(oy)] * iw;
      if (!linear) {
        for (int64_t ox = 0; ox < ow; ++ox) dst[ox] = r0[c.i0[static_cast<size_t>(ox)]];
        return;
      }
      const float* r1 = src + r.i1[static_cast<size_t>(oy)] * iw;
      const float wy = r.w1[static_cast<size_t>(oy)];
      for (int64_t ox = 0; ox < ow; ++ox) {
        const size_t u = static_cast<size_t>(ox);
        const float wx = c.w1[u];
        const float top = r0[c.i0[u]] + wx * (r0[c.i1[u]] - r0[c.i0[u]]);
        const float bottom = r1[c.i0[u]] + wx * (r1[c.i1[u]] - r1[c.i0[u]]);
        dst[ox] = top + wy * (bottom - top);
      }
    });
  };
}

}  // namespace tessera::cpu
