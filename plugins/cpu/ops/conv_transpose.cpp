// ConvTranspose (1-D and 2-D, NCHW, float32) as the packed GEMM plus col2im: per image and group,
// col = W_g^T [M/g * kh * kw, C/g] x X_g [C/g, H * W], then every column of col is scattered
// (added) into the output plane at the position its window tap lands on. Constant weights are
// packed once at compile time (the GEMM's A); the input is the B operand read as it is laid out.
// Groups, strides, dilations, pads, output_padding, output_shape and auto_pad follow core's op
// (core/ops/conv_transpose.cpp); the output shape core inferred decides the extent.
#include <tbb/parallel_for.h>

#include <limits>
#include <memory>

#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

struct TransposeGeometry {
  int64_t batch = 1, c = 0, h = 1, w = 1;  // input
  int64_t m = 0, oh = 1, ow = 1;           // output channels and extent
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0;  // begin pads (may be negative when output_shape extends the output)
  int64_t group = 1;
};

int64_t floor_div2(int64_t v) {
  return v >= 0 ? v / 2 : -((-v + 1) / 2);
}

// The begin pad of spatial dim i (core's rule): from output_shape or SAME_* the total pad is the
// full length minus the output, split with the odd one at the end (SAME_UPPER) or the start.
int64_t begin_pad(const NodeView& node, size_t i, size_t n, int64_t in, int64_t out, int64_t k,
                  int64_t s, int64_t d) {
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  const std::vector<int64_t> out_pad = node.attr_ints("output_padding", std::vector<int64_t>(n, 0));
  const int64_t full = s * (in - 1) + out_pad[i] + (k - 1) * d + 1;
  const bool shaped = !node.attr_ints("output_shape", {}).empty();
  if (shaped || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    const int64_t total = full - out;
    return auto_pad == "SAME_UPPER" ? floor_div2(total) : total - floor_div2(total);
  }
  if (auto_pad == "VALID") return 0;
  return node.attr_ints("pads", std::vector<int64_t>(2 * n, 0))[i];
}

TransposeGeometry geometry(const NodeView& node) {
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* wt = node.input(1);
  const tsr_tensor* y = node.output(0);
  const size_t n = static_cast<size_t>(x->rank - 2);
  const std::vector<int64_t> ones(n, 1);
  const std::vector<int64_t> s = node.attr_ints("strides", ones);
  const std::vector<int64_t> d = node.attr_ints("dilations", ones);
  TransposeGeometry g;
  g.batch = x->dims[0];
  g.c = x->dims[1];
  g.m = y->dims[1];
  g.group = node.attr_int("group", 1);
  // A 1-D transpose is the 2-D one with a height of 1.
  const size_t first = n == 2 ? 0 : 1;
  int64_t* in[2] = {&g.h, &g.w};
  int64_t* out[2] = {&g.oh, &g.ow};
  int64_t* k[2] = {&g.kh, &g.kw};
  int64_t* st[2] = {&g.sh, &g.sw};
  int64_t* dl[2] = {&g.dh, &g.dw};
  int64_t* pad[2] = {&g.pt, &g.pl};
  for (size_t i = 0; i < n; ++i) {
    const size_t a = first + i;
    *in[a] = x->dims[2 + i];
    *out[a] = y->dims[2 + i];
    *k[a] = wt->dims[2 + i];
    *st[a] = s[i];
    *dl[a] = d[i];
    *pad[a] = begin_pad(node, i, n, *in[a], *out[a], *k[a], s[i], d[i]);
  }
  return g;
}

// Input positions [*lo, *hi) whose tap at offset `tap` (k * dilation - pad) lands inside
// [0, out): o = i * stride + tap.
void landing_range(int64_t in, int64_t out, int64_t stride, int64_t tap, int64_t* lo,
                   int64_t* hi) {
  // Smallest i with i * stride + tap >= 0, largest with i * stride + tap <= out - 1.
  const int64_t need = -tap;
  int64_t first = need <= 0 ? 0 : (need + stride - 1) / stride;
  const int64_t room = out - 1 - tap;
  int64_t last = room < 0 ? -1 : room / stride;
  *lo = std::max<int64_t>(first, 0);
  *hi = std::min<int64_t>(last + 1, in);
  if (*hi < *lo) *hi = *lo;
}

// Adds the taps of one output channel (rows [kh * kw] of col, each H * W) into its plane.
void col2im_channel(const float* col, const TransposeGeometry& g, float* plane) {
  const int64_t hw = g.h * g.w;
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    int64_t iy0, iy1;
    landing_range(g.h, g.oh, g.sh, ky * g.dh - g.pt, &iy0, &iy1);
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      int64_t ix0, ix1;
      const int64_t tap_x = kx * g.dw - g.pl;
      landing_range(g.w, g.ow, g.sw, tap_x, &ix0, &ix1);
      if (ix1 <= ix0) continue;
      const float* rows = col + (ky * g.kw + kx) * hw;
      for (int64_t iy = iy0; iy < iy1; ++iy) {
        const float* src = rows + iy * g.w + ix0;
        float* dst = plane + (iy * g.sh + ky * g.dh - g.pt) * g.ow + ix0 * g.sw + tap_x;
        const int64_t len = ix1 - ix0;
        if (g.sw == 1) {
          add_clamp(dst, src, dst, len, -inf, inf);
        } else {
          for (int64_t t = 0; t < len; ++t) dst[t * g.sw] += src[t];
        }
      }
    }
  }
}

struct ColTag {};

}  // namespace

std::string query_conv_transpose(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* w = node.input(1);
  if (!is_f32(x) || !is_f32(w) || !is_f32(node.output(0))) return "only float32 is implemented";
  if (x->rank != 3 && x->rank != 4) return "only 1-D and 2-D ConvTranspose are implemented";
  const tsr_tensor* b = node.num_inputs() > 2 ? node.input(2) : nullptr;
  if (b != nullptr && !is_f32(b)) return "bias must be float32";
  const int64_t group = node.attr_int("group", 1);
  if (group <= 0 || x->dims[1] % group != 0 || w->dims[0] != x->dims[1]) {
    return "group must divide the input channels";
  }
  if (numel(*node.output(0)) == 0 || numel(*x) == 0) return "empty tensors";
  return "";
}

Step build_conv_transpose(BuildContext& ctx) {
  const NodeView& node = ctx.node;
  const TransposeGeometry g = geometry(node);
  const int64_t cg = g.c / g.group, mg = g.m / g.group;
  const int64_t taps = g.kh * g.kw, rows = mg * taps, cols = g.h * g.w;
  // The GEMM is shaped like a 1x1 conv's (K = input channels, columns = input pixels), so it takes
  // that schedule's heuristic and reads the input in place as B.
  const Config config = choose_config(ctx, default_conv_config(rows, cols, cg, ctx.threads));
  const GemmBlocking blocking = gemm_blocking(config);
  const int64_t mr = tile_rows(config);
  // A_g = W_g^T: row (mg, ky, kx), column c is w[(g * cg + c) * rows + row]. Constant weights
  // are packed once here; weights given at run time (the ONNX node tests) are packed per run.
  const auto pack_weights = [=](const float* w, std::vector<PackedMatrix>* out) {
    out->resize(static_cast<size_t>(g.group));
    for (int64_t grp = 0; grp < g.group; ++grp) {
      pack_a(w + grp * cg * rows, rows, cg, 1, rows, &(*out)[static_cast<size_t>(grp)], mr);
    }
  };
  const float* constant_w = static_cast<const float*>(node.input(1)->data);
  auto packed = std::make_shared<std::vector<PackedMatrix>>();
  if (constant_w != nullptr) pack_weights(constant_w, packed.get());
  const int32_t weights = node.input_index(1);
  const int32_t in = node.input_index(0), out = ctx.output;
  const int32_t bias = node.num_inputs() > 2 ? node.input_index(2) : -1;
  const int64_t plane = g.oh * g.ow;
  return [=](std::vector<float*>& v) {
    // col lives in the calling thread's buffer, so sessions run from several threads at once
    // never share it.
    float* col = thread_scratch<ColTag>(rows * cols);
    static thread_local std::vector<PackedMatrix> run_packed;
    if (packed->empty()) pack_weights(v[weights], &run_packed);
    const std::vector<PackedMatrix>& a = packed->empty() ? run_packed : *packed;
    const float* b = bias >= 0 ? v[bias] : nullptr;
    const int64_t nr = blocking.nr;
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t grp = 0; grp < g.group; ++grp) {
        // B = X_g, [cg, H * W] row-major: read in place, only a partial last panel is packed.
        const float* xg = v[in] + (n * g.c + grp * cg) * cols;
        const PanelPacker pack = [=](int64_t j0, float* panel) {
          copy_panel(xg, cg, cols, cols, j0, panel, nr);
        };
        sgemm_panels(a[static_cast<size_t>(grp)], cols, pack, col, cols, Epilogue{},
                     blocking, xg, cols);
        float* y = v[out] + (n * g.m + grp * mg) * plane;
        tbb::parallel_for(int64_t{0}, mg, [&](int64_t m) {
          float* p = y + m * plane;
          std::fill(p, p + plane, b != nullptr ? b[grp * mg + m] : 0.0f);
          col2im_channel(col + m * taps * cols, g, p);
        });
      }
    }
  };
}

}  // namespace tessera::cpu
