// Helpers shared by the neural-network op files (Conv, MaxPool, AveragePool and friends):
// attribute reads whose errors name the node, and the sliding-window geometry (kernel, strides,
// dilations, explicit pads or auto_pad, ceil_mode) that turns an input's spatial shape into the
// output's spatial shape and the resolved begin/end pads.
//
// Header-only on purpose: core/CMakeLists.txt globs core/ops/*.cpp only, so a .cpp in util/
// would not be compiled.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "op.hpp"

namespace tessera::ops {

// Attribute reads for infer functions: a missing required attribute or a wrong attribute kind
// fails through ctx.fail, so the message names the node.
inline int64_t attr_int(const InferContext& ctx, const std::string& name, int64_t fallback) {
  try {
    return ctx.node.attrs.get_int(name, fallback);
  } catch (const Error& e) {
    ctx.fail(e.what());
  }
}
inline float attr_float(const InferContext& ctx, const std::string& name, float fallback) {
  try {
    return ctx.node.attrs.get_float(name, fallback);
  } catch (const Error& e) {
    ctx.fail(e.what());
  }
}
inline std::string attr_string(const InferContext& ctx, const std::string& name,
                               const std::string& fallback) {
  try {
    return ctx.node.attrs.get_string(name, fallback);
  } catch (const Error& e) {
    ctx.fail(e.what());
  }
}
inline std::vector<int64_t> attr_ints(const InferContext& ctx, const std::string& name,
                                      const std::vector<int64_t>& fallback) {
  try {
    return ctx.node.attrs.get_ints(name, fallback);
  } catch (const Error& e) {
    ctx.fail(e.what());
  }
}
inline std::vector<float> attr_floats(const InferContext& ctx, const std::string& name,
                                      const std::vector<float>& fallback) {
  try {
    return ctx.node.attrs.get_floats(name, fallback);
  } catch (const Error& e) {
    ctx.fail(e.what());
  }
}
// Absent: empty.
inline std::vector<std::string> attr_strings(const InferContext& ctx, const std::string& name) {
  if (!ctx.node.attrs.has(name)) return {};
  try {
    return ctx.node.attrs.get_strings(name);
  } catch (const Error& e) {
    ctx.fail(e.what());
  }
}
// 0 or 1 only; anything else fails naming the attribute.
inline bool attr_bool(const InferContext& ctx, const std::string& name, bool fallback) {
  const int64_t v = attr_int(ctx, name, fallback ? 1 : 0);
  if (v != 0 && v != 1) {
    ctx.fail("attribute '" + name + "' = " + std::to_string(v) + " must be 0 or 1");
  }
  return v == 1;
}

// The geometry of one sliding-window op over the spatial dims (everything after N and C).
struct Window {
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads_begin;  // resolved (auto_pad applied)
  std::vector<int64_t> pads_end;
  std::vector<int64_t> output;  // output spatial sizes
  size_t rank() const { return kernel.size(); }
};

// Reads strides, dilations, pads, auto_pad and (when `allow_ceil_mode`) ceil_mode from the node
// and computes the output size per spatial dim the way the ONNX spec and ONNX Runtime do:
//   NOTSET:     out = floor_or_ceil((in + pb + pe - ((k - 1) * d + 1)) / s) + 1; with ceil_mode a
//               last window that would start inside the end padding is dropped (as PyTorch and
//               the ONNX reference do).
//   VALID:      no padding, out = floor((in - ((k - 1) * d + 1)) / s) + 1.
//   SAME_UPPER: out = ceil(in / s), total pad = max(0, (out - 1) * s + (k - 1) * d + 1 - in),
//               the odd extra pad at the end; SAME_LOWER puts it at the beginning.
// `kernel` comes from kernel_shape (pooling) or the weight (Conv); `spatial` is the input's.
inline Window resolve_window(const InferContext& ctx, const std::vector<int64_t>& spatial,
                             const std::vector<int64_t>& kernel, bool allow_ceil_mode,
                             bool allow_dilations = true) {
  const size_t n = spatial.size();
  Window w;
  w.kernel = kernel;
  if (kernel.size() != n) {
    ctx.fail("kernel has " + std::to_string(kernel.size()) + " spatial dims but the input has " +
             std::to_string(n));
  }
  for (int64_t k : kernel) {
    if (k <= 0) ctx.fail("kernel_shape values must be positive, got " + std::to_string(k));
  }
  w.strides = attr_ints(ctx, "strides", std::vector<int64_t>(n, 1));
  if (w.strides.size() != n) {
    ctx.fail("attribute 'strides' has " + std::to_string(w.strides.size()) +
             " values; expected one per spatial dim (" + std::to_string(n) + ")");
  }
  for (int64_t s : w.strides) {
    if (s <= 0) ctx.fail("attribute 'strides' values must be positive, got " + std::to_string(s));
  }
  if (!allow_dilations && ctx.node.attrs.has("dilations")) {
    ctx.unsupported("attribute 'dilations' is not supported for this op at opset " +
                    std::to_string(ctx.opset));
  }
  w.dilations = attr_ints(ctx, "dilations", std::vector<int64_t>(n, 1));
  if (w.dilations.size() != n) {
    ctx.fail("attribute 'dilations' has " + std::to_string(w.dilations.size()) +
             " values; expected one per spatial dim (" + std::to_string(n) + ")");
  }
  for (int64_t d : w.dilations) {
    if (d <= 0) {
      ctx.fail("attribute 'dilations' values must be positive, got " + std::to_string(d));
    }
  }
  const bool ceil_mode = allow_ceil_mode && attr_bool(ctx, "ceil_mode", false);
  if (!allow_ceil_mode && ctx.node.attrs.has("ceil_mode") && attr_int(ctx, "ceil_mode", 0) != 0) {
    ctx.unsupported("attribute 'ceil_mode' is not supported for this op at opset " +
                    std::to_string(ctx.opset));
  }
  const std::string auto_pad = attr_string(ctx, "auto_pad", "NOTSET");
  std::vector<int64_t> pads = attr_ints(ctx, "pads", std::vector<int64_t>(2 * n, 0));
  if (pads.size() != 2 * n) {
    ctx.fail("attribute 'pads' has " + std::to_string(pads.size()) + " values; expected " +
             std::to_string(2 * n) + " (begin pads then end pads, one per spatial dim)");
  }
  for (int64_t p : pads) {
    if (p < 0) ctx.fail("attribute 'pads' values must be >= 0, got " + std::to_string(p));
  }
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER") {
    ctx.fail("attribute 'auto_pad' = '" + auto_pad +
             "' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER");
  }
  if (auto_pad != "NOTSET") {
    for (int64_t p : pads) {
      if (p != 0) {
        ctx.fail("attribute 'pads' must not be set together with auto_pad = '" + auto_pad +
                 "'; drop one of them");
      }
    }
  }

  w.pads_begin.assign(n, 0);
  w.pads_end.assign(n, 0);
  w.output.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = spatial[i];
    const int64_t s = w.strides[i];
    // Attributes are untrusted: a huge kernel, dilation or pad must not wrap the geometry.
    const char* what = "window geometry (kernel, dilations, pads)";
    const int64_t eff_k =  // dilated window extent
        checked_add(checked_mul(w.kernel[i] - 1, w.dilations[i], what), 1, what);
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t out = checked_add(in, s - 1, what) / s;
      const int64_t total = std::max<int64_t>(
          0, checked_add(checked_mul(out - 1, s, what), eff_k - in, what));
      const int64_t small = total / 2;
      w.pads_begin[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      w.pads_end[i] = total - w.pads_begin[i];
      w.output[i] = out;
      continue;
    }
    if (auto_pad == "NOTSET") {
      w.pads_begin[i] = pads[i];
      w.pads_end[i] = pads[n + i];
    }
    const int64_t span =
        checked_add(checked_add(in, w.pads_begin[i], what), w.pads_end[i], what) - eff_k;
    if (span < 0) {
      ctx.fail("spatial dim " + std::to_string(i) + ": the window (kernel " +
               std::to_string(w.kernel[i]) + ", dilation " + std::to_string(w.dilations[i]) +
               ") is larger than the padded input (" + std::to_string(in) + " + pads " +
               std::to_string(w.pads_begin[i]) + "/" + std::to_string(w.pads_end[i]) + ")");
    }
    int64_t out = span / s + 1;
    if (ceil_mode && span % s != 0) {
      out += 1;
      // The extra window must start inside the input or the begin padding.
      if ((out - 1) * s >= in + w.pads_begin[i]) out -= 1;
    }
    w.output[i] = out;
  }
  return w;
}

// A window in the explicit form core hands plugins (normalise_window_attributes): every
// attribute written out, pads as begin pads then end pads, no auto_pad.
struct ExplicitWindow {
  std::vector<int64_t> kernel, strides, dilations, pads;
};

// ConvTranspose's window for input shape `x` and weight shape `w` in explicit form (the pads its
// auto_pad or output_shape mean), or nullopt where that needs negative pads (an output_shape
// beyond the full output). Throws like its shape inference. Defined in conv_transpose.cpp.
std::optional<ExplicitWindow> conv_transpose_explicit_window(const Node& node, int64_t opset,
                                                             const Shape& x, const Shape& w);

// Kernel size: the kernel_shape attribute, required for pooling.
inline std::vector<int64_t> required_kernel_shape(const InferContext& ctx) {
  if (!ctx.node.attrs.has("kernel_shape")) ctx.fail("required attribute 'kernel_shape' is missing");
  return attr_ints(ctx, "kernel_shape", {});
}

// Checks input 0 is float32 with rank >= 3 (N, C, spatial...) and returns its spatial dims.
inline std::vector<int64_t> nchw_spatial(const InferContext& ctx,
                                         std::initializer_list<DType> dtypes = {DType::kFloat32}) {
  ctx.expect_dtype(0, dtypes);
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 3) {
    ctx.fail("input 0 has shape " + shape_str(x) +
             "; expected rank >= 3 (N, C, then one or more spatial dims)");
  }
  return std::vector<int64_t>(x.begin() + 2, x.end());
}

// Re-reads the geometry at compute time from the shapes of input and output. Infer already
// validated every attribute, so this cannot fail; it avoids caching state between the two.
inline Window window_for_compute(const Node& node, int64_t opset, const Shape& x,
                                 const std::vector<int64_t>& kernel, bool allow_ceil_mode) {
  InferContext ctx(node, opset, "node '" + node.name + "' (" + node.op_type + ")");
  return resolve_window(ctx, std::vector<int64_t>(x.begin() + 2, x.end()), kernel, allow_ceil_mode);
}

// Element counts of one input plane, one output plane and one kernel window.
struct PlaneSizes {
  int64_t in = 1;
  int64_t out = 1;
  int64_t kernel = 1;
};
inline PlaneSizes plane_sizes(const std::vector<int64_t>& in_spatial, const Window& win,
                              const std::vector<int64_t>& kernel) {
  PlaneSizes sizes;
  // The kernel's extent is not bounded by any tensor size (huge pads make room for it).
  const char* what = "pooling plane size";
  for (size_t i = 0; i < win.rank(); ++i) {
    sizes.in = checked_mul(sizes.in, in_spatial[i], what);
    sizes.out = checked_mul(sizes.out, win.output[i], what);
    sizes.kernel = checked_mul(sizes.kernel, kernel[i], what);
  }
  return sizes;
}

// GlobalAveragePool / GlobalMaxPool: one float32 NC<spatial> input, spatial dims become 1s.
inline void infer_global_pool(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  nchw_spatial(ctx);
  Shape y = ctx.input(0).shape;
  std::fill(y.begin() + 2, y.end(), 1);
  ctx.outputs.at(0) = {DType::kFloat32, y};
}

// Writes reduce(plane, plane_size) for every (n, c) plane of the input.
template <typename Reduce>
void compute_global_pool(ComputeContext& ctx, Reduce reduce) {
  const Tensor& xt = ctx.input(0);
  const Shape& x = xt.shape();
  const int64_t planes = x[0] * x[1];
  const int64_t size = planes == 0 ? 0 : xt.numel() / planes;
  const float* xd = xt.data<float>();
  float* yd = ctx.outputs[0].data<float>();
  for (int64_t p = 0; p < planes; ++p) yd[p] = reduce(xd + p * size, size);
}

// Advances the multi-index `idx` over `dims` in row-major order; false after the last one.
inline bool next_index(std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  for (size_t i = dims.size(); i-- > 0;) {
    if (++idx[i] < dims[i]) return true;
    idx[i] = 0;
  }
  return false;
}

}  // namespace tessera::ops
