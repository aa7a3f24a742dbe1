// The resampling kernel shared by Resize and Upsample: a plan (mode, coordinate transform,
// rounding, cubic parameters, per-axis scales and output shape) and the naive N-D kernel that
// runs it. Each output coordinate on each axis becomes a short list of (input index, weight) taps;
// an output element is the sum over the product of its axes' taps.
//
// Interpolation weights follow the ONNX reference implementation (onnx/reference/ops/
// op_resize.py), which generates the backend test data: for linear and cubic, taps sit at
// base + i around the input coordinate c, where base = floor(c) and ratio = c - base, except that
// an integral c uses ratio 1 (the left neighbour); tap i weighs filter(s * (i - ratio)) with the
// weights normalized to sum 1, and indices past the edge read the edge value. s is 1 without
// antialias, and min(scale, 1) with it, which widens the filter when downsampling. With
// exclude_outside, taps past the edge weigh 0 before normalization.
//
// Header-only for the same reason as broadcast.hpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "op.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {

struct ResizePlan {
  std::string mode = "nearest";           // nearest | linear | cubic
  std::string coord_mode = "asymmetric";  // coordinate_transformation_mode
  std::string nearest_mode = "opset10";   // or: floor up, ceil down (Resize-10 and Upsample)
  float cubic_coeff_a = -0.75f;
  bool exclude_outside = false;
  bool antialias = false;
  float extrapolation_value = 0.0f;       // tf_crop_and_resize: outside the crop box
  std::vector<float> scales;              // per axis of X, as the coordinate transform uses them
  std::vector<float> roi_start, roi_end;  // per axis of X; tf_crop_and_resize only
  Shape output;
};

// Fails unless a scale is a finite number > 0; `what` names the input or attribute.
inline void check_resize_scale(const InferContext& ctx, float s, const std::string& what) {
  if (!(s > 0.0f) || !std::isfinite(s)) {
    ctx.fail(what + " values must be finite and > 0, got " + std::to_string(s));
  }
}

// floor(float(in) * scale) in float32 as ONNX Runtime and ONNX shape inference compute an output
// dim from a scale; fails naming the axis when it does not fit int64.
inline int64_t scaled_dim(const InferContext& ctx, int64_t in, float scale, size_t axis) {
  const float out = std::floor(static_cast<float>(in) * scale);
  if (!(out < 9.2e18f)) {
    ctx.fail("axis " + std::to_string(axis) + ": " + std::to_string(in) + " * scale " +
             std::to_string(scale) + " overflows int64");
  }
  return static_cast<int64_t>(out);
}

// Output coordinate -> input coordinate on one axis, per the coordinate_transformation_mode
// formulas of the ONNX spec. Runs in float32 as ONNX Runtime does.
inline float resize_input_coord(const ResizePlan& plan, size_t axis, float x, int64_t in_len,
                                int64_t out_len) {
  const std::string& mode = plan.coord_mode;
  const float scale = plan.scales[axis];
  if (mode == "half_pixel") return (x + 0.5f) / scale - 0.5f;
  if (mode == "pytorch_half_pixel") return out_len > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
  if (mode == "align_corners") {
    return out_len == 1 ? 0.0f
                        : x * static_cast<float>(in_len - 1) / static_cast<float>(out_len - 1);
  }
  if (mode == "asymmetric") return x / scale;
  if (mode == "tf_half_pixel_for_nearest") return (x + 0.5f) / scale;
  if (mode == "tf_crop_and_resize") {
    const float start = plan.roi_start[axis], end = plan.roi_end[axis];
    const float span = static_cast<float>(in_len - 1);
    return out_len > 1 ? start * span + x * (end - start) * span / static_cast<float>(out_len - 1)
                       : 0.5f * (start + end) * span;
  }
  // half_pixel_symmetric (opset 19): half_pixel, re-centred when the output size was rounded.
  const float adjustment = static_cast<float>(out_len) / (scale * static_cast<float>(in_len));
  const float center = static_cast<float>(in_len) / 2.0f;
  return center * (1.0f - adjustment) + (x + 0.5f) / scale - 0.5f;
}

inline int64_t resize_nearest_index(const std::string& mode, float x) {
  const float fl = std::floor(x);
  if (mode == "floor") return static_cast<int64_t>(fl);
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  if (x - fl == 0.5f) return static_cast<int64_t>(mode == "round_prefer_floor" ? fl : fl + 1.0f);
  return static_cast<int64_t>(std::round(x));
}

struct ResizeTap {
  int64_t index;
  double weight;
};
// The taps of one output coordinate on one axis; `outside` when tf_crop_and_resize maps it out
// of the input (the element then takes extrapolation_value).
struct ResizeAxisTaps {
  std::vector<ResizeTap> taps;
  bool outside = false;
};

// Keys cubic convolution kernel with parameter a (ONNX's cubic_coeff_a).
inline double resize_cubic_filter(double t, double a) {
  t = std::fabs(t);
  if (t <= 1.0) return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
  if (t < 2.0) return ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a;
  return 0.0;
}

inline ResizeAxisTaps resize_axis_taps(const ResizePlan& plan, size_t axis, int64_t o,
                                       int64_t in_len, int64_t out_len) {
  ResizeAxisTaps r;
  const float c = resize_input_coord(plan, axis, static_cast<float>(o), in_len, out_len);
  if (plan.coord_mode == "tf_crop_and_resize" && (c < 0.0f || c > static_cast<float>(in_len - 1))) {
    r.outside = true;
    return r;
  }
  auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in_len - 1); };
  if (plan.mode == "nearest") {
    std::string rounding = plan.nearest_mode;
    if (rounding == "opset10") rounding = plan.scales[axis] < 1.0f ? "ceil" : "floor";
    r.taps.push_back({clamp(resize_nearest_index(rounding, c)), 1.0});
    return r;
  }
  const bool cubic = plan.mode == "cubic";
  const double s = plan.antialias ? std::min(1.0, static_cast<double>(plan.scales[axis])) : 1.0;
  const double support = cubic ? 2.0 : 1.0;
  double base = std::floor(static_cast<double>(c));
  double ratio = static_cast<double>(c) - base;
  if (ratio == 0.0) {
    ratio = 1.0;
    base -= 1.0;
  }
  const int64_t first = static_cast<int64_t>(std::floor(-support / s)) + 1;
  const int64_t last = 1 - first;  // taps first..last are symmetric around ratio's cell
  double total = 0.0;
  std::vector<ResizeTap> taps;
  for (int64_t i = first; i <= last; ++i) {
    const double t = s * (static_cast<double>(i) - ratio);
    double w =
        cubic ? resize_cubic_filter(t, plan.cubic_coeff_a) : std::max(0.0, 1.0 - std::fabs(t));
    const int64_t index = static_cast<int64_t>(base) + i;
    if (plan.exclude_outside && (index < 0 || index >= in_len)) w = 0.0;
    total += w;
    taps.push_back({clamp(index), w});
  }
  for (const ResizeTap& t : taps) {
    if (t.weight != 0.0 && total != 0.0) r.taps.push_back({t.index, t.weight / total});
  }
  return r;
}

// y = resize(x) per `plan`; x and y float32, y already shaped plan.output.
inline void compute_resize_plan(const Tensor& xt, const ResizePlan& plan, Tensor& yt) {
  const Shape& x = xt.shape();
  const Shape& y = plan.output;
  const size_t rank = x.size();
  std::vector<std::vector<ResizeAxisTaps>> axis_taps(rank);
  for (size_t d = 0; d < rank; ++d) {
    for (int64_t o = 0; o < y[d]; ++o) {
      axis_taps[d].push_back(resize_axis_taps(plan, d, o, x[d], y[d]));
    }
  }
  const std::vector<int64_t> strides = shape_strides(x);
  const float* xd = xt.data<float>();
  float* yd = yt.data<float>();
  std::vector<int64_t> o(rank, 0);
  std::vector<int64_t> pick(rank, 0), counts(rank, 0);
  const int64_t total = shape_numel(y);
  for (int64_t i = 0; i < total; ++i, next_index(o, y)) {
    bool outside = false;
    for (size_t d = 0; d < rank; ++d) {
      const ResizeAxisTaps& t = axis_taps[d][static_cast<size_t>(o[d])];
      outside = outside || t.outside;
      counts[d] = static_cast<int64_t>(t.taps.size());
    }
    if (outside) {
      yd[i] = plan.extrapolation_value;
      continue;
    }
    // Sum over every combination of one tap per axis.
    double sum = 0.0;
    std::fill(pick.begin(), pick.end(), 0);
    do {
      double weight = 1.0;
      int64_t offset = 0;
      for (size_t d = 0; d < rank; ++d) {
        const ResizeTap& t =
            axis_taps[d][static_cast<size_t>(o[d])].taps[static_cast<size_t>(pick[d])];
        weight *= t.weight;
        offset += t.index * strides[d];
      }
      sum += weight * xd[offset];
    } while (next_index(pick, counts));
    yd[i] = static_cast<float>(sum);
  }
}

}  // namespace tessera::ops
