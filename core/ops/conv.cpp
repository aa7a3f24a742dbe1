// Conv (ONNX opsets 1-18): N-D convolution over NC<spatial> float32 tensors with groups
// (depthwise included), strides, dilations, explicit pads or auto_pad, and an optional bias.
#include <algorithm>
#include <string>
#include <vector>

#include "op.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

// Kernel spatial dims: from the weight; kernel_shape, when given, must agree with it.
std::vector<int64_t> conv_kernel(const InferContext& ctx, const Shape& w) {
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (ctx.node.attrs.has("kernel_shape")) {
    const std::vector<int64_t> attr = attr_ints(ctx, "kernel_shape", {});
    if (attr != kernel) {
      ctx.fail("attribute 'kernel_shape' " + shape_str(attr) +
               " does not match the weight's spatial dims " + shape_str(kernel));
    }
  }
  return kernel;
}

void infer_conv(InferContext& ctx) {
  ctx.expect_inputs(2, 3);
  const std::vector<int64_t> spatial = nchw_spatial(ctx);
  ctx.expect_dtype(1, {DType::kFloat32});
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  if (w.size() != x.size()) {
    ctx.fail("weight (input 1) has shape " + shape_str(w) + " but input 0 has shape " +
             shape_str(x) + "; both must have the same rank (M, C/group, kernel...)");
  }
  const int64_t group = attr_int(ctx, "group", 1);
  if (group <= 0) ctx.fail("attribute 'group' = " + std::to_string(group) + " must be positive");
  const int64_t channels = x[1];
  const int64_t out_channels = w[0];
  // Division, not w[1] * group: a hostile group (2^61) must not overflow.
  if (channels % group != 0 || channels / group != w[1]) {
    ctx.fail("input has " + std::to_string(channels) + " channels but weight " + shape_str(w) +
             " with group = " + std::to_string(group) +
             " does not fit (C must equal weight dim 1 * group)");
  }
  if (out_channels % group != 0) {
    ctx.fail("weight has " + std::to_string(out_channels) +
             " output channels, not divisible by group = " + std::to_string(group));
  }
  if (ctx.has_input(2)) {
    ctx.expect_dtype(2, {DType::kFloat32});
    const Shape& b = ctx.input(2).shape;
    if (b != Shape{out_channels}) {
      ctx.fail("bias (input 2) has shape " + shape_str(b) + "; expected [" +
               std::to_string(out_channels) + "] (one per output channel)");
    }
  }
  const Window win = resolve_window(ctx, spatial, conv_kernel(ctx, w), /*allow_ceil_mode=*/false);
  Shape y = {x[0], out_channels};
  y.insert(y.end(), win.output.begin(), win.output.end());
  ctx.outputs.at(0) = {DType::kFloat32, y};
}

void compute_conv(ComputeContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const Tensor& wt = ctx.input(1);
  const Shape& x = xt.shape();
  const Shape& ws = wt.shape();
  const std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  const Window win = window_for_compute(ctx.node, ctx.opset, x, kernel, false);
  const int64_t group = ctx.node.attrs.get_int("group", 1);
  const size_t nsp = win.rank();

  const int64_t batch = x[0];
  const int64_t channels = x[1];
  const int64_t out_channels = ws[0];
  const int64_t in_per_group = channels / group;
  const int64_t out_per_group = out_channels / group;
  const std::vector<int64_t> in_spatial(x.begin() + 2, x.end());
  const PlaneSizes sizes = plane_sizes(in_spatial, win, kernel);
  const int64_t in_size = sizes.in, out_size = sizes.out, k_size = sizes.kernel;

  const float* xd = xt.data<float>();
  const float* wd = wt.data<float>();
  const float* bd = ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr;
  float* yd = ctx.outputs[0].data<float>();

  std::vector<int64_t> o(nsp), k(nsp);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < out_channels; ++m) {
      const int64_t g = m / out_per_group;
      float* y_plane = yd + (n * out_channels + m) * out_size;
      std::fill(o.begin(), o.end(), 0);
      for (int64_t oi = 0; oi < out_size; ++oi, next_index(o, win.output)) {
        double sum = bd ? bd[m] : 0.0;
        for (int64_t cg = 0; cg < in_per_group; ++cg) {
          const int64_t c = g * in_per_group + cg;
          const float* x_plane = xd + (n * channels + c) * in_size;
          const float* w_plane = wd + (m * in_per_group + cg) * k_size;
          std::fill(k.begin(), k.end(), 0);
          for (int64_t ki = 0; ki < k_size; ++ki, next_index(k, kernel)) {
            int64_t offset = 0;
            bool inside = true;
            for (size_t d = 0; d < nsp; ++d) {
              const int64_t pos =
                  o[d] * win.strides[d] - win.pads_begin[d] + k[d] * win.dilations[d];
              if (pos < 0 || pos >= in_spatial[d]) {
                inside = false;
                break;
              }
              offset = offset * in_spatial[d] + pos;
            }
            if (inside) sum += static_cast<double>(x_plane[offset]) * w_plane[ki];
          }
        }
        y_plane[oi] = static_cast<float>(sum);
      }
    }
  }
}

}  // namespace

TESSERA_REGISTER_OP("Conv", infer_conv, compute_conv);

}  // namespace tessera::ops
