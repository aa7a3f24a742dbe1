// AveragePool (ONNX opsets 1-19): N-D average pooling over NC<spatial> float32 tensors with
// strides, explicit pads or auto_pad, ceil_mode (opset 10+), count_include_pad, and dilations
// (opset 19+).
//
// The divisor: count_include_pad = 0 counts the window positions inside the input;
// count_include_pad = 1 counts those inside the input plus the explicit (or auto_pad) padding,
// but not the extra overhang a ceil_mode window may reach past the end padding. That is what
// PyTorch and ONNX Runtime do; the ONNX reference implementation counts the overhang too (see
// ONNX's test_averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_True).
#include <algorithm>
#include <string>
#include <vector>

#include "op.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

void infer_average_pool(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  const std::vector<int64_t> spatial = nchw_spatial(ctx);
  attr_bool(ctx, "count_include_pad", false);
  const Window win = resolve_window(ctx, spatial, required_kernel_shape(ctx),
                                    /*allow_ceil_mode=*/ctx.opset >= 10,
                                    /*allow_dilations=*/ctx.opset >= 19);
  if (ctx.outputs.size() != 1) ctx.fail("AveragePool has exactly one output");
  const Shape& x = ctx.input(0).shape;
  Shape y = {x[0], x[1]};
  y.insert(y.end(), win.output.begin(), win.output.end());
  ctx.outputs.at(0) = {DType::kFloat32, y};
}

void compute_average_pool(ComputeContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const Shape& x = xt.shape();
  const std::vector<int64_t> kernel = ctx.node.attrs.get_ints("kernel_shape");
  const Window win = window_for_compute(ctx.node, ctx.opset, x, kernel, ctx.opset >= 10);
  const bool count_include_pad = ctx.node.attrs.get_int("count_include_pad", 0) == 1;
  const size_t nsp = win.rank();
  const std::vector<int64_t> in_spatial(x.begin() + 2, x.end());
  const PlaneSizes sizes = plane_sizes(in_spatial, win, kernel);
  const int64_t in_size = sizes.in, out_size = sizes.out, k_size = sizes.kernel;
  const float* xd = xt.data<float>();
  float* yd = ctx.outputs[0].data<float>();

  std::vector<int64_t> o(nsp), k(nsp);
  for (int64_t plane = 0; plane < x[0] * x[1]; ++plane) {
    const float* x_plane = xd + plane * in_size;
    std::fill(o.begin(), o.end(), 0);
    for (int64_t oi = 0; oi < out_size; ++oi, next_index(o, win.output)) {
      double sum = 0.0;
      int64_t count = 0;
      std::fill(k.begin(), k.end(), 0);
      for (int64_t ki = 0; ki < k_size; ++ki, next_index(k, kernel)) {
        int64_t offset = 0;
        bool inside = true, inside_padded = true;
        for (size_t d = 0; d < nsp; ++d) {
          const int64_t pos = o[d] * win.strides[d] - win.pads_begin[d] + k[d] * win.dilations[d];
          if (pos < -win.pads_begin[d] || pos >= in_spatial[d] + win.pads_end[d]) {
            inside_padded = false;
          }
          if (pos < 0 || pos >= in_spatial[d]) inside = false;
          if (inside) offset = offset * in_spatial[d] + pos;
        }
        if (inside) sum += x_plane[offset];
        if (count_include_pad ? inside_padded : inside) ++count;
      }
      // A window with nothing to count (only possible with pads >= kernel) averages to 0 here;
      // ONNX leaves it undefined.
      yd[plane * out_size + oi] = count == 0 ? 0.0f : static_cast<float>(sum / count);
    }
  }
}

}  // namespace

TESSERA_REGISTER_OP("AveragePool", infer_average_pool, compute_average_pool);

}  // namespace tessera::ops
