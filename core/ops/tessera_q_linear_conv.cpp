// TesseraQLinearConv: the int8 unit DequantizeLinear -> Conv -> [Relu/Clip ->] QuantizeLinear
// on 2-D NCHW tensors (util/quantized_unit.hpp has its inputs and its requantization). The sum of
// (x - x_zero_point) * (w - w_zero_point) over the window is exact in int32 (padding reads
// x_zero_point, adding nothing), plus the int32 bias, then requantized per output channel. This is
// the oracle of every plugin's int8 conv.
#include <string>
#include <vector>

#include "op.hpp"
#include "util/pooling.hpp"
#include "util/quantized_unit.hpp"

namespace tessera::ops {
namespace {

struct QConvShape {
  int64_t n = 0, c = 0, h = 0, w = 0, oc = 0, oh = 0, ow = 0, kh = 0, kw = 0, group = 1;
  Window win;
};

QConvShape qconv_shape(const InferContext& ctx) {
  const std::vector<int64_t> spatial = nchw_spatial(ctx, {DType::kUInt8, DType::kInt8});
  const Shape& x = ctx.input(kQX).shape;
  const Shape& w = ctx.input(kQW).shape;
  if (x.size() != 4 || w.size() != 4) {
    ctx.fail("input " + shape_str(x) + " and weight " + shape_str(w) + " must be rank 4 (2-D)");
  }
  QConvShape s;
  s.group = attr_int(ctx, "group", 1);
  if (s.group <= 0 || x[1] % s.group != 0 || x[1] / s.group != w[1] || w[0] % s.group != 0) {
    ctx.fail("weight " + shape_str(w) + " with group " + std::to_string(s.group) +
             " does not fit input " + shape_str(x));
  }
  s.win = resolve_window(ctx, spatial, {w[2], w[3]}, /*allow_ceil_mode=*/false);
  s.n = x[0];
  s.c = x[1];
  s.h = x[2];
  s.w = x[3];
  s.oc = w[0];
  s.kh = w[2];
  s.kw = w[3];
  s.oh = s.win.output[0];
  s.ow = s.win.output[1];
  return s;
}

void infer_qconv(InferContext& ctx) {
  const QConvShape s = qconv_shape(ctx);
  const UnitParams p = unit_params(ctx, s.oc);
  ctx.outputs.at(0) = {p.y_type, {s.n, s.oc, s.oh, s.ow}};
}

// The int32 sum of output (b, m, oy, ox).
int32_t qconv_sum(const QConvShape& s, const Tensor& x, const Tensor& w, int32_t x_zero,
                  int32_t w_zero, int64_t b, int64_t m, int64_t oy, int64_t ox) {
  const int64_t cg = s.c / s.group, g = m / (s.oc / s.group);
  int32_t sum = 0;
  for (int64_t ci = 0; ci < cg; ++ci) {
    const int64_t c = g * cg + ci;
    for (int64_t ky = 0; ky < s.kh; ++ky) {
      const int64_t iy = oy * s.win.strides[0] - s.win.pads_begin[0] + ky * s.win.dilations[0];
      for (int64_t kx = 0; kx < s.kw; ++kx) {
        const int64_t ix = ox * s.win.strides[1] - s.win.pads_begin[1] + kx * s.win.dilations[1];
        const bool inside = iy >= 0 && iy < s.h && ix >= 0 && ix < s.w;
        const int32_t xv = inside ? quant_element(x, ((b * s.c + c) * s.h + iy) * s.w + ix) : x_zero;
        const int32_t wv = quant_element(w, ((m * cg + ci) * s.kh + ky) * s.kw + kx);
        sum += (xv - x_zero) * (wv - w_zero);
      }
    }
  }
  return sum;
}

void compute_qconv(ComputeContext& ctx) {
  const InferContext ictx = context_of_constants(ctx);
  const QConvShape s = qconv_shape(ictx);
  const UnitParams p = unit_params(ictx, s.oc);
  const Tensor& x = ctx.input(kQX);
  const Tensor& w = ctx.input(kQW);
  Tensor& y = ctx.outputs[0];
  int64_t i = 0;
  for (int64_t b = 0; b < s.n; ++b) {
    for (int64_t m = 0; m < s.oc; ++m) {
      for (int64_t oy = 0; oy < s.oh; ++oy) {
        for (int64_t ox = 0; ox < s.ow; ++ox, ++i) {
          const int32_t acc = qconv_sum(s, x, w, p.x_zero, p.w_zero[m], b, m, oy, ox) + p.bias[m];
          store_quant(y, i, p.requant[m].apply(acc));
        }
      }
    }
  }
}

}  // namespace

TESSERA_REGISTER_OP(kQLinearConvUnit, infer_qconv, compute_qconv);

}  // namespace tessera::ops
