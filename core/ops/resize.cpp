// Resize (ONNX opsets 10-19) on float32, modes nearest, linear and cubic over every resized axis
// (the kernel is util/resize.hpp, shared with Upsample).
//   opset 10:  inputs X, scales; coordinates are "asymmetric" and nearest takes the floor when
//              an axis is upsampled and the ceiling when it is downsampled (ONNX Runtime's
//              opset-10 behaviour, which the ONNX backend test data for Resize-10 agrees with).
//   opset 11+: inputs X, roi, scales, sizes (exactly one of scales/sizes non-empty); attributes
//              coordinate_transformation_mode (every mode, tf_crop_and_resize with roi and
//              extrapolation_value), nearest_mode, cubic_coeff_a, exclude_outside.
//   opset 18+: attributes axes, antialias, keep_aspect_ratio_policy.
// scales/sizes must be constants since they decide the output shape; roi may be a runtime input.
//
// Arithmetic follows ONNX Runtime and ONNX's own shape inference: output dims with scales are
// floor(float(in) * scale) in float32 (roi does not enter it), and the coordinate transform runs in
// float32. align_corners and pytorch_half_pixel use the integer output length, as ONNX Runtime
// and PyTorch do; the ONNX reference implementation uses in * scale instead, which differs only
// when that product is not an integer (e.g. ONNX's
// test_resize_downsample_scales_linear_align_corners).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/pooling.hpp"
#include "util/resize.hpp"

namespace tessera::ops {
namespace {

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

// roi (input 1): [starts..., ends...], one pair per resized axis, as fractions of each axis.
// It decides values, not the shape, so it may arrive at run time: inference checks it when it
// is a constant and the kernel reads it from the tensor.
void read_roi(const InferContext& ctx, const std::vector<int64_t>& axes, ResizePlan& plan) {
  const size_t rank = ctx.input(0).shape.size();
  plan.roi_start.assign(rank, 0.0f);
  plan.roi_end.assign(rank, 1.0f);
  if (!given(ctx, 1)) {
    ctx.fail("coordinate_transformation_mode 'tf_crop_and_resize' needs input 1 ('roi')");
  }
  const InputInfo& roi = ctx.input(1);
  if (roi.dtype != DType::kFloat32 || roi.shape != Shape{static_cast<int64_t>(2 * axes.size())}) {
    ctx.fail("input 1 ('roi') must be a float32 tensor of shape [" +
             std::to_string(2 * axes.size()) + "] (start and end per resized axis), got " +
             dtype_name(roi.dtype) + " " + shape_str(roi.shape));
  }
  if (roi.constant == nullptr) return;
  const std::vector<float> v = roi.constant->to_float_vector();
  for (size_t i = 0; i < axes.size(); ++i) {
    if (!std::isfinite(v[i]) || !std::isfinite(v[axes.size() + i])) {
      ctx.fail("input 1 ('roi') holds a value that is not finite");
    }
    plan.roi_start[static_cast<size_t>(axes[i])] = v[i];
    plan.roi_end[static_cast<size_t>(axes[i])] = v[axes.size() + i];
  }
}

ResizePlan resize_plan(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  ResizePlan plan;
  plan.mode = attr_string(ctx, "mode", "nearest");
  const bool cubic_allowed = ctx.opset >= 11;
  if (plan.mode != "nearest" && plan.mode != "linear" && !(plan.mode == "cubic" && cubic_allowed)) {
    ctx.fail("attribute 'mode' = '" + plan.mode + "' is not one of nearest, linear" +
             std::string(cubic_allowed ? ", cubic" : ""));
  }
  plan.coord_mode = ctx.opset >= 11
                        ? attr_string(ctx, "coordinate_transformation_mode", "half_pixel")
                        : "asymmetric";
  if (!one_of(plan.coord_mode, {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                "tf_half_pixel_for_nearest", "tf_crop_and_resize"}) &&
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
    plan.exclude_outside = attr_bool(ctx, "exclude_outside", false);
    plan.extrapolation_value = attr_float(ctx, "extrapolation_value", 0.0f);
    plan.cubic_coeff_a = attr_float(ctx, "cubic_coeff_a", -0.75f);
    if (!std::isfinite(plan.cubic_coeff_a)) {
      ctx.fail("attribute 'cubic_coeff_a' = " + std::to_string(plan.cubic_coeff_a) +
               " must be finite");
    }
  }
  // Antialias changes nothing for nearest (the spec defines it for linear and cubic only).
  plan.antialias = ctx.opset >= 18 && attr_bool(ctx, "antialias", false) && plan.mode != "nearest";
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
  if (plan.coord_mode == "tf_crop_and_resize") read_roi(ctx, axes, plan);

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
      ctx.fail("input " + std::to_string(scales_input) +
               " ('scales') must be a 1-D float32 tensor, got " +
               std::string(dtype_name(t.dtype())) + " " + shape_str(t.shape()));
    }
    const std::vector<float> s = t.to_float_vector();
    if (s.size() != axes.size()) {
      ctx.fail("input " + std::to_string(scales_input) + " ('scales') has " +
               std::to_string(s.size()) + " values; expected " + std::to_string(axes.size()) +
               " (one per resized axis)");
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      check_resize_scale(ctx, s[i], "input " + std::to_string(scales_input) + " ('scales')");
      const size_t a = static_cast<size_t>(axes[i]);
      plan.scales[a] = s[i];
      plan.output[a] = scaled_dim(ctx, x[a], s[i], a);
    }
    return plan;
  }
  const Tensor& t = ctx.constant_input(sizes_input);
  if (t.dtype() != DType::kInt64 || t.rank() != 1) {
    ctx.fail("input 3 ('sizes') must be a 1-D int64 tensor, got " +
             std::string(dtype_name(t.dtype())) + " " + shape_str(t.shape()));
  }
  const std::vector<int64_t> sizes = t.to_int64_vector();
  if (sizes.size() != axes.size()) {
    ctx.fail("input 3 ('sizes') has " + std::to_string(sizes.size()) + " values; expected " +
             std::to_string(axes.size()) + " (one per resized axis)");
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    if (sizes[i] <= 0) {
      ctx.fail("input 3 ('sizes') values must be > 0, got " + std::to_string(sizes[i]));
    }
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

void compute_resize(ComputeContext& ctx) {
  const InferContext ictx = context_of_constants(ctx);
  compute_resize_plan(ctx.input(0), resize_plan(ictx), ctx.outputs[0]);
}

}  // namespace

TESSERA_REGISTER_OP("Resize", infer_resize, compute_resize);

}  // namespace tessera::ops
