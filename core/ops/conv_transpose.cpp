// ConvTranspose (ONNX opsets 1-22): the gradient of Conv with respect to its input, over
// NC<spatial> float32 tensors. W is [C, M / group, kernel...]; group, strides, dilations, pads,
// output_padding, output_shape and auto_pad as the spec defines them:
//   full length  F = stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1
//   output_shape given: total pad = F - output_shape, split SAME_UPPER ? (total / 2 at the
//                       start) : (total - total / 2 at the start), floor division; a negative
//                       total extends the output with positions only the bias reaches.
//   SAME_UPPER / SAME_LOWER: the output is in * stride, the pad split as above.
//   VALID: no pads; NOTSET: the pads attribute, output F - pad_begin - pad_end.
// output_shape may name the spatial dims only or, as some exporters write it, N and C too.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/checked.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

struct TransposeGeometry {
  std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end, output;
};

int64_t floor_div2(int64_t v) {
  return v >= 0 ? v / 2 : -((-v + 1) / 2);
}

std::vector<int64_t> spatial_attr(const InferContext& ctx, const std::string& name, size_t n,
                                  int64_t fallback, int64_t min_value) {
  const std::vector<int64_t> v = attr_ints(ctx, name, std::vector<int64_t>(n, fallback));
  if (v.size() != n) {
    ctx.fail("attribute '" + name + "' has " + std::to_string(v.size()) +
             " values; expected one per spatial dim (" + std::to_string(n) + ")");
  }
  for (int64_t x : v) {
    if (x < min_value) {
      ctx.fail("attribute '" + name + "' values must be >= " + std::to_string(min_value) +
               ", got " + std::to_string(x));
    }
  }
  return v;
}

TransposeGeometry transpose_geometry(const InferContext& ctx, const Shape& x, const Shape& w) {
  const size_t n = x.size() - 2;
  TransposeGeometry g;
  g.kernel.assign(w.begin() + 2, w.end());
  if (ctx.node.attrs.has("kernel_shape") && attr_ints(ctx, "kernel_shape", {}) != g.kernel) {
    ctx.fail("attribute 'kernel_shape' " + shape_str(attr_ints(ctx, "kernel_shape", {})) +
             " does not match the weight's spatial dims " + shape_str(g.kernel));
  }
  for (size_t i = 0; i < n; ++i) {
    if (g.kernel[i] <= 0) {
      ctx.fail("weight (input 1) " + shape_str(w) + " has an empty kernel dim " +
               std::to_string(i));
    }
    if (x[2 + i] <= 0) {
      ctx.fail("input 0 " + shape_str(x) + " has an empty spatial dim " + std::to_string(i));
    }
  }
  g.strides = spatial_attr(ctx, "strides", n, 1, 1);
  g.dilations = spatial_attr(ctx, "dilations", n, 1, 1);
  const std::vector<int64_t> out_pad = spatial_attr(ctx, "output_padding", n, 0, 0);
  for (size_t i = 0; i < n; ++i) {
    if (out_pad[i] >= std::max(g.strides[i], g.dilations[i])) {
      ctx.fail("attribute 'output_padding' = " + std::to_string(out_pad[i]) + " at spatial dim " +
               std::to_string(i) + " must be smaller than the stride or the dilation");
    }
  }
  const std::vector<int64_t> pads = attr_ints(ctx, "pads", std::vector<int64_t>(2 * n, 0));
  if (pads.size() != 2 * n) {
    ctx.fail("attribute 'pads' has " + std::to_string(pads.size()) + " values; expected " +
             std::to_string(2 * n) + " (begin pads then end pads, one per spatial dim)");
  }
  for (int64_t p : pads) {
    if (p < 0) ctx.fail("attribute 'pads' values must be >= 0, got " + std::to_string(p));
  }
  const std::string auto_pad = attr_string(ctx, "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER") {
    ctx.fail("attribute 'auto_pad' = '" + auto_pad +
             "' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER");
  }
  std::vector<int64_t> out_shape = attr_ints(ctx, "output_shape", {});
  if (out_shape.size() == n + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  if (!out_shape.empty() && out_shape.size() != n) {
    ctx.fail("attribute 'output_shape' has " + std::to_string(out_shape.size()) +
             " values; expected one per spatial dim (" + std::to_string(n) + ")");
  }
  for (int64_t o : out_shape) {
    if (o <= 0)
      ctx.fail("attribute 'output_shape' values must be positive, got " + std::to_string(o));
  }

  g.pads_begin.assign(n, 0);
  g.pads_end.assign(n, 0);
  g.output.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const std::string dim = "spatial dim " + std::to_string(i);
    const int64_t extent =
        checked_add(ctx, checked_mul(ctx, g.kernel[i] - 1, g.dilations[i], dim + " kernel extent"),
                    1, dim + " kernel extent");
    const int64_t full =
        checked_add(ctx,
                    checked_add(ctx, checked_mul(ctx, g.strides[i], x[2 + i] - 1, dim + " output"),
                                out_pad[i], dim + " output"),
                    extent, dim + " output");
    int64_t target = -1;
    if (!out_shape.empty()) {
      target = out_shape[i];
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      target = checked_mul(ctx, x[2 + i], g.strides[i], dim + " output");
    }
    if (target >= 0) {
      const int64_t total = full - target;
      g.pads_begin[i] = auto_pad == "SAME_UPPER" ? floor_div2(total) : total - floor_div2(total);
      g.pads_end[i] = total - g.pads_begin[i];
      g.output[i] = target;
      continue;
    }
    if (auto_pad == "NOTSET") g.pads_begin[i] = pads[i];
    const int64_t end = auto_pad == "NOTSET" ? pads[n + i] : 0;
    g.pads_end[i] = end;
    g.output[i] = full - g.pads_begin[i] - end;
    if (g.output[i] <= 0) {
      ctx.fail(dim + ": attribute 'pads' (" + std::to_string(g.pads_begin[i]) + ", " +
               std::to_string(end) + ") remove the whole output of length " + std::to_string(full));
    }
  }
  return g;
}

void infer_conv_transpose(InferContext& ctx) {
  ctx.expect_inputs(2, 3);
  nchw_spatial(ctx);
  ctx.expect_dtype(1, {DType::kFloat32});
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  if (w.size() != x.size()) {
    ctx.fail("weight (input 1) has shape " + shape_str(w) + " but input 0 has shape " +
             shape_str(x) + "; both must have the same rank (C, M/group, kernel...)");
  }
  const int64_t group = attr_int(ctx, "group", 1);
  if (group <= 0) ctx.fail("attribute 'group' = " + std::to_string(group) + " must be positive");
  if (x[1] % group != 0) {
    ctx.fail("attribute 'group' = " + std::to_string(group) + " does not divide the " +
             std::to_string(x[1]) + " input channels");
  }
  if (w[0] != x[1]) {
    ctx.fail("weight (input 1) " + shape_str(w) + " has dim 0 = " + std::to_string(w[0]) +
             " but the input has " + std::to_string(x[1]) + " channels (W is [C, M/group, ...])");
  }
  const int64_t out_channels = checked_mul(ctx, w[1], group, "output channels");
  if (ctx.has_input(2)) {
    ctx.expect_dtype(2, {DType::kFloat32});
    if (ctx.input(2).shape != Shape{out_channels}) {
      ctx.fail("bias (input 2) has shape " + shape_str(ctx.input(2).shape) + "; expected [" +
               std::to_string(out_channels) + "] (one per output channel)");
    }
  }
  const TransposeGeometry g = transpose_geometry(ctx, x, w);
  Shape y = {x[0], out_channels};
  y.insert(y.end(), g.output.begin(), g.output.end());
  ctx.outputs.at(0) = {DType::kFloat32, y};
}

}  // namespace

std::optional<ExplicitWindow> conv_transpose_explicit_window(const Node& node, int64_t opset,
                                                             const Shape& x, const Shape& w) {
  InferContext ctx(node, opset, node_where(node));
  const TransposeGeometry g = transpose_geometry(ctx, x, w);
  ExplicitWindow e;
  e.kernel = g.kernel;
  e.strides = g.strides;
  e.dilations = g.dilations;
  e.pads = g.pads_begin;
  e.pads.insert(e.pads.end(), g.pads_end.begin(), g.pads_end.end());
  // output_shape past the full output extends it: pads cannot say that, so that node keeps it.
  for (int64_t p : e.pads) {
    if (p < 0) return std::nullopt;
  }
  return e;
}

namespace {

// Gathers each output element from the inputs whose scattered kernel taps land on it:
// out position o receives x[i] * w[k] where i * stride + k * dilation - pad_begin == o.
void compute_conv_transpose(ComputeContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const Tensor& wt = ctx.input(1);
  const Shape& x = xt.shape();
  const Shape& ws = wt.shape();
  InferContext ictx(ctx.node, ctx.opset, node_where(ctx.node));
  const TransposeGeometry g = transpose_geometry(ictx, x, ws);
  const int64_t group = ctx.node.attrs.get_int("group", 1);
  const size_t nsp = g.kernel.size();
  const int64_t batch = x[0], channels = x[1];
  const int64_t in_per_group = channels / group;
  const int64_t out_per_group = ws[1];
  const int64_t out_channels = out_per_group * group;
  const std::vector<int64_t> in_spatial(x.begin() + 2, x.end());
  const int64_t in_size = shape_numel(in_spatial);
  const int64_t out_size = shape_numel(g.output);
  const int64_t k_size = shape_numel(g.kernel);

  const float* xd = xt.data<float>();
  const float* wd = wt.data<float>();
  const float* bd = ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr;
  float* yd = ctx.outputs[0].data<float>();

  std::vector<int64_t> o(nsp), k(nsp);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < out_channels; ++m) {
      const int64_t grp = m / out_per_group;
      const int64_t mg = m % out_per_group;
      float* y_plane = yd + (n * out_channels + m) * out_size;
      std::fill(o.begin(), o.end(), 0);
      for (int64_t oi = 0; oi < out_size; ++oi, next_index(o, g.output)) {
        double sum = bd ? bd[m] : 0.0;
        std::fill(k.begin(), k.end(), 0);
        for (int64_t ki = 0; ki < k_size; ++ki, next_index(k, g.kernel)) {
          int64_t offset = 0;
          bool hit = true;
          for (size_t d = 0; d < nsp && hit; ++d) {
            const int64_t scaled = o[d] + g.pads_begin[d] - k[d] * g.dilations[d];
            const int64_t i = scaled / g.strides[d];
            hit = scaled >= 0 && scaled % g.strides[d] == 0 && i < in_spatial[d];
            offset = offset * in_spatial[d] + i;
          }
          if (!hit) continue;
          for (int64_t cg = 0; cg < in_per_group; ++cg) {
            const int64_t c = grp * in_per_group + cg;
            sum += static_cast<double>(xd[(n * channels + c) * in_size + offset]) *
                   wd[(c * out_per_group + mg) * k_size + ki];
          }
        }
        y_plane[oi] = static_cast<float>(sum);
      }
    }
  }
}

}  // namespace

TESSERA_REGISTER_OP("ConvTranspose", infer_conv_transpose, compute_conv_transpose);

}  // namespace tessera::ops
