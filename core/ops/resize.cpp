// Resize (ONNX opsets 10-19) on float32, modes nearest and linear (N-linear over every resized
// axis).
//   opset 10:  inputs X, scales; coordinates are "asymmetric" and nearest takes the floor when
//              an axis is upsampled and the ceiling when it is downsampled (ONNX Runtime's
//              opset-10 behaviour, which the ONNX backend test data for Resize-10 agrees with).
//   opset 11+: inputs X, roi, scales, sizes (exactly one of scales/sizes non-empty); attributes
//              coordinate_transformation_mode, nearest_mode, exclude_outside (cubic only, so
//              without effect here), extrapolation_value (tf_crop_and_resize only).
//   opset 18+: attributes axes, antialias, keep_aspect_ratio_policy.
// Unsupported, with an UnsupportedError: mode cubic, tf_crop_and_resize (roi), antialias with
// linear. scales/sizes must be constants since they decide the output shape.
//
// Arithmetic follows ONNX Runtime and ONNX's own shape inference: output dims with scales are
// floor(float(in) * scale) in float32, and the coordinate transform runs in float32.
// align_corners and pytorch_half_pixel use the integer output length, as ONNX Runtime and
// PyTorch do; the ONNX reference implementation uses in * scale instead, which differs only when
// that product is not an integer (e.g. ONNX's test_resize_downsample_scales_linear_align_corners).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

struct ResizePlan {
  std::string mode;           // nearest | linear
  std::string coord_mode;     // coordinate_transformation_mode
  std::string nearest_mode;   // or "opset10": floor per upsampled axis, ceil per downsampled one
  std::vector<float> scales;  // per axis of X, as used by the coordinate transform
  Shape output;
};

// An optional tensor input counts as given when present and non-empty (opset 11-12 models pass
// an empty tensor for "absent").
bool given(const InferContext& ctx, size_t i) {
  return ctx.has_input(i) && shape_numel(ctx.input(i).shape) > 0;
}

bool one_of(const std::string& v, std::initializer_list<const char*> options) {
  for (const char* o : options) {
    if (v == o) return true;
  }
  return false;
}

ResizePlan resize_plan(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  ResizePlan plan;
  plan.mode = attr_string(ctx, "mode", "nearest");
  if (plan.mode == "cubic" && ctx.opset >= 11) {
    ctx.unsupported("mode 'cubic' is not supported; use 'linear' or 'nearest'");
  }
  if (plan.mode != "nearest" && plan.mode != "linear") {
    ctx.fail("attribute 'mode' = '" + plan.mode + "' is not one of nearest, linear" +
             std::string(ctx.opset >= 11 ? ", cubic" : ""));
  }
  plan.coord_mode = ctx.opset >= 11
                        ? attr_string(ctx, "coordinate_transformation_mode", "half_pixel")
                        : "asymmetric";
  if (plan.coord_mode == "tf_crop_and_resize") {
    ctx.unsupported(
        "coordinate_transformation_mode 'tf_crop_and_resize' (roi cropping) is not "
        "supported");
  }
  if (!one_of(plan.coord_mode, {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                "tf_half_pixel_for_nearest"}) &&
      !(plan.coord_mode == "half_pixel_symmetric" && ctx.opset >= 19)) {
    ctx.fail("attribute 'coordinate_transformation_mode' = '" + plan.coord_mode +
             "' is not a known mode (half_pixel, pytorch_half_pixel, align_corners, asymmetric, "
             "tf_half_pixel_for_nearest, tf_crop_and_resize" +
             std::string(ctx.opset >= 19 ? ", half_pixel_symmetric)" : ")"));
  }
  plan.nearest_mode =
      ctx.opset >= 11 ? attr_string(ctx, "nearest_mode", "round_prefer_floor") : "opset10";
  if (ctx.opset >= 11 &&
      !one_of(plan.nearest_mode, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})) {
    ctx.fail("attribute 'nearest_mode' = '" + plan.nearest_mode +
             "' is not one of round_prefer_floor, round_prefer_ceil, floor, ceil");
  }
  if (ctx.opset >= 11) {
    attr_bool(ctx, "exclude_outside", false);
    attr_float(ctx, "extrapolation_value", 0.0f);
    attr_float(ctx, "cubic_coeff_a", -0.75f);
  }
  if (ctx.opset >= 18 && attr_bool(ctx, "antialias", false) && plan.mode != "nearest") {
    ctx.unsupported("antialias = 1 with mode '" + plan.mode + "' is not supported");
  }
  std::vector<int64_t> axes;
  if (ctx.opset >= 18 && ctx.node.attrs.has("axes")) {
    axes = normalize_axes(attr_ints(ctx, "axes", {}), rank, ctx.where);
  } else {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  const std::string policy =
      ctx.opset >= 18 ? attr_string(ctx, "keep_aspect_ratio_policy", "stretch") : "stretch";
  if (!one_of(policy, {"stretch", "not_larger", "not_smaller"})) {
    ctx.fail("attribute 'keep_aspect_ratio_policy' = '" + policy +
             "' is not one of stretch, not_larger, not_smaller");
  }

  const size_t scales_input = ctx.opset >= 11 ? 2 : 1;
  const size_t sizes_input = 3;
  const bool has_scales = given(ctx, scales_input);
  const bool has_sizes = ctx.opset >= 11 && given(ctx, sizes_input);
  if (has_scales == has_sizes) {
    ctx.fail(has_scales ? "both scales and sizes are given; pass exactly one of them"
                        : "neither scales nor sizes is given; pass exactly one of them");
  }
  plan.scales.assign(static_cast<size_t>(rank), 1.0f);
  plan.output = x;
  if (has_scales) {
    const Tensor& t = ctx.constant_input(scales_input);
    if (t.dtype() != DType::kFloat32 || t.rank() != 1) {
      ctx.fail("scales must be a 1-D float32 tensor, got " + std::string(dtype_name(t.dtype())) +
               " " + shape_str(t.shape()));
    }
    const std::vector<float> s = t.to_float_vector();
    if (s.size() != axes.size()) {
      ctx.fail("scales has " + std::to_string(s.size()) + " values; expected " +
               std::to_string(axes.size()) + " (one per resized axis)");
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      if (!(s[i] > 0.0f)) ctx.fail("scales values must be > 0, got " + std::to_string(s[i]));
      const size_t a = static_cast<size_t>(axes[i]);
      plan.scales[a] = s[i];
      plan.output[a] = static_cast<int64_t>(std::floor(static_cast<float>(x[a]) * s[i]));
    }
    return plan;
  }
  const Tensor& t = ctx.constant_input(sizes_input);
  if (t.dtype() != DType::kInt64 || t.rank() != 1) {
    ctx.fail("sizes must be a 1-D int64 tensor, got " + std::string(dtype_name(t.dtype())) + " " +
             shape_str(t.shape()));
  }
  const std::vector<int64_t> sizes = t.to_int64_vector();
  if (sizes.size() != axes.size()) {
    ctx.fail("sizes has " + std::to_string(sizes.size()) + " values; expected " +
             std::to_string(axes.size()) + " (one per resized axis)");
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    if (sizes[i] <= 0) ctx.fail("sizes values must be > 0, got " + std::to_string(sizes[i]));
    if (x[static_cast<size_t>(axes[i])] <= 0) {
      ctx.fail("cannot resize empty axis " + std::to_string(axes[i]) + " to a given size");
    }
  }
  if (policy == "stretch") {
    for (size_t i = 0; i < axes.size(); ++i) {
      const size_t a = static_cast<size_t>(axes[i]);
      plan.output[a] = sizes[i];
      plan.scales[a] = static_cast<float>(sizes[i]) / static_cast<float>(x[a]);
    }
    return plan;
  }
  // One scale for every resized axis: the largest that fits (not_larger) or the smallest that
  // covers (not_smaller) the requested sizes; the dims then follow from it.
  float scale = 0.0f;
  for (size_t i = 0; i < axes.size(); ++i) {
    const float s =
        static_cast<float>(sizes[i]) / static_cast<float>(x[static_cast<size_t>(axes[i])]);
    if (i == 0 || (policy == "not_larger" ? s < scale : s > scale)) scale = s;
  }
  for (int64_t a : axes) {
    const size_t u = static_cast<size_t>(a);
    plan.scales[u] = scale;
    plan.output[u] = static_cast<int64_t>(std::round(scale * static_cast<float>(x[u])));
  }
  return plan;
}

void infer_resize(InferContext& ctx) {
  ctx.expect_inputs(ctx.opset >= 11 ? 1 : 2, ctx.opset >= 11 ? 4 : 2);
  ctx.expect_dtype(0, {DType::kFloat32});
  const ResizePlan plan = resize_plan(ctx);
  ctx.outputs.at(0) = {DType::kFloat32, plan.output};
}

// Output coordinate -> input coordinate, per the ONNX coordinate_transformation_mode formulas.
float to_input_coord(const std::string& mode, float x, float scale, int64_t in_len,
                     int64_t out_len) {
  if (mode == "half_pixel") return (x + 0.5f) / scale - 0.5f;
  if (mode == "pytorch_half_pixel") return out_len > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
  if (mode == "align_corners") {
    return out_len == 1 ? 0.0f
                        : x * static_cast<float>(in_len - 1) / static_cast<float>(out_len - 1);
  }
  if (mode == "asymmetric") return x / scale;
  if (mode == "tf_half_pixel_for_nearest") return (x + 0.5f) / scale;
  // half_pixel_symmetric (opset 19): half_pixel, re-centred when the output size was rounded.
  const float adjustment = static_cast<float>(out_len) / (scale * static_cast<float>(in_len));
  const float center = static_cast<float>(in_len) / 2.0f;
  return center * (1.0f - adjustment) + (x + 0.5f) / scale - 0.5f;
}

int64_t nearest_index(const std::string& mode, float x) {
  const float fl = std::floor(x);
  if (mode == "floor") return static_cast<int64_t>(fl);
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  if (x - fl == 0.5f) return static_cast<int64_t>(mode == "round_prefer_floor" ? fl : fl + 1.0f);
  return static_cast<int64_t>(std::round(x));
}

// For one axis and output position: the two input neighbours and the weight of the upper one.
// Nearest uses only `lo`.
struct AxisTap {
  int64_t lo = 0, hi = 0;
  float w_hi = 0.0f;
};

void compute_resize(ComputeContext& ctx) {
  const Tensor& xt = ctx.input(0);
  InferContext ictx(ctx.node, ctx.opset, node_where(ctx.node));
  ictx.inputs.resize(ctx.inputs.size());
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (!ctx.has_input(i)) continue;
    ictx.inputs[i] = {true, ctx.inputs[i]->dtype(), ctx.inputs[i]->shape(), ctx.inputs[i]};
  }
  const ResizePlan plan = resize_plan(ictx);
  const Shape& x = xt.shape();
  const Shape& y = plan.output;
  const size_t rank = x.size();
  const bool linear = plan.mode == "linear";

  std::vector<std::vector<AxisTap>> taps(rank);
  for (size_t d = 0; d < rank; ++d) {
    taps[d].resize(static_cast<size_t>(y[d]));
    for (int64_t o = 0; o < y[d]; ++o) {
      const float c =
          to_input_coord(plan.coord_mode, static_cast<float>(o), plan.scales[d], x[d], y[d]);
      AxisTap& t = taps[d][static_cast<size_t>(o)];
      if (linear) {
        const float fl = std::floor(c);
        t.lo = std::clamp<int64_t>(static_cast<int64_t>(fl), 0, x[d] - 1);
        t.hi = std::clamp<int64_t>(static_cast<int64_t>(fl) + 1, 0, x[d] - 1);
        t.w_hi = c - fl;
      } else {
        std::string rounding = plan.nearest_mode;
        if (rounding == "opset10") rounding = plan.scales[d] < 1.0f ? "ceil" : "floor";
        t.lo = std::clamp<int64_t>(nearest_index(rounding, c), 0, x[d] - 1);
      }
    }
  }

  const std::vector<int64_t> strides = shape_strides(x);
  const float* xd = xt.data<float>();
  float* yd = ctx.outputs[0].data<float>();
  std::vector<int64_t> o(rank, 0);
  const int64_t total = shape_numel(y);
  for (int64_t i = 0; i < total; ++i, next_index(o, y)) {
    if (!linear) {
      int64_t offset = 0;
      for (size_t d = 0; d < rank; ++d)
        offset += taps[d][static_cast<size_t>(o[d])].lo * strides[d];
      yd[i] = xd[offset];
      continue;
    }
    // Sum over the 2^rank corners of the cell; bit d of `corner` picks hi on axis d.
    double sum = 0.0;
    for (uint64_t corner = 0; corner < (uint64_t{1} << rank); ++corner) {
      double weight = 1.0;
      int64_t offset = 0;
      for (size_t d = 0; d < rank && weight != 0.0; ++d) {
        const AxisTap& t = taps[d][static_cast<size_t>(o[d])];
        const bool hi = (corner >> d) & 1;
        weight *= hi ? t.w_hi : 1.0f - t.w_hi;
        offset += (hi ? t.hi : t.lo) * strides[d];
      }
      if (weight != 0.0) sum += weight * xd[offset];
    }
    yd[i] = static_cast<float>(sum);
  }
}

}  // namespace

TESSERA_REGISTER_OP("Resize", infer_resize, compute_resize);

}  // namespace tessera::ops
