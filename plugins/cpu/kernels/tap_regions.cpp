// Dilated convs as one GEMM per window tap over the output rectangle where the tap reads the
// input. An atrous conv of a segmentation head (deeplabv3's ASPP: 3x3 at rate 12 on a 14x14 map)
// reads padding with most of its taps for most outputs; im2col multiplies those zeros like any
// other value (867 MFLOP where 160 are live), so the conv ran 2.7x slower than ONNX Runtime, which
// skips taps outside the input. Per tap, the outputs whose window tap lies inside the input form
// one rectangle (an interval per axis), so the conv is a sum of shifted 1x1 convs, each over its
// rectangle.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "kernels/kernels.hpp"

namespace tessera::cpu {

void tap_output_range(int64_t in, int64_t out, int64_t stride, int64_t pad, int64_t offset,
                      int64_t* lo, int64_t* hi) {
  // o * stride >= pad - offset  and  o * stride <= in - 1 + pad - offset.
  const int64_t need = pad - offset;
  *lo = need <= 0 ? 0 : (need + stride - 1) / stride;
  const int64_t top = in - 1 + pad - offset;
  *hi = top < 0 ? 0 : std::min(out, top / stride + 1);
  if (*hi < *lo) *hi = *lo;
}

bool tap_regions_apply(const ConvGeometry& g) {
  return g.group == 1 && g.oh > 0 && g.ow > 0 && g.c > 0 && g.oc > 0;
}

TapRegionPlan plan_tap_regions(const ConvGeometry& g) {
  if (!tap_regions_apply(g)) throw std::invalid_argument("plan_tap_regions: group 1 convs only");
  TapRegionPlan plan;
  int64_t live = 0;
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    int64_t y0, y1;
    tap_output_range(g.h, g.oh, g.sh, g.pt, ky * g.dil_h, &y0, &y1);
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      int64_t x0, x1;
      tap_output_range(g.w, g.ow, g.sw, g.pl, kx * g.dil_w, &x0, &x1);
      if (y1 > y0 && x1 > x0) {
        plan.taps.push_back(TapRect{ky, kx, y0, y1, x0, x1});
        live += (y1 - y0) * (x1 - x0);
      }
    }
  }
  auto area = [](const TapRect& t) { return (t.y1 - t.y0) * (t.x1 - t.x0); };
  std::stable_sort(plan.taps.begin(), plan.taps.end(),
                   [&](const TapRect& a, const TapRect& b) { return area(a) > area(b); });
  plan.first_covers_output = !plan.taps.empty() && area(plan.taps[0]) == g.oh * g.ow;
  plan.live_share = static_cast<double>(live) / static_cast<double>(g.kh * g.kw * g.oh * g.ow);
  return plan;
}

std::vector<PackedMatrix> pack_tap_weights(const float* w, const ConvGeometry& g,
                                           const TapRegionPlan& plan, int64_t mr) {
  std::vector<PackedMatrix> out(plan.taps.size());
  for (size_t t = 0; t < plan.taps.size(); ++t) {
    // Element (o, c) of the tap's matrix is w[o][c][ky][kx].
    const int64_t tap = plan.taps[t].ky * g.kw + plan.taps[t].kx;
    pack_a(w + tap, g.oc, g.c, g.c * g.kh * g.kw, g.kh * g.kw, &out[t], mr);
  }
  return out;
}

void tap_region_conv(const float* x, const ConvGeometry& g, const TapRegionPlan& plan,
                     const std::vector<PackedMatrix>& a, const float* bias,
                     const GemmBlocking& blocking, float* y) {
  const int64_t nr = blocking.nr;
  const int64_t plane = g.oh * g.ow;
  if (!plan.first_covers_output) {
    tbb::parallel_for(int64_t{0}, g.oc, [&](int64_t o) {
      std::fill(y + o * plane, y + (o + 1) * plane, bias != nullptr ? bias[o] : 0.0f);
    });
  }
  std::vector<float> block;
  for (size_t t = 0; t < plan.taps.size(); ++t) {
    const TapRect& r = plan.taps[t];
    const int64_t rh = r.y1 - r.y0, rw = r.x1 - r.x0, n = rh * rw;
    const int64_t dy = r.ky * g.dil_h - g.pt, dx = r.kx * g.dil_w - g.pl;
    // B (c x n): channel c's input under the tap for each output of the rectangle.
    PanelPacker pack = [&](int64_t j0, float* panel) {
      const int64_t width = std::min(nr, n - j0);
      float* row = panel;
      for (int64_t c = 0; c < g.c; ++c, row += nr) {
        const float* src_plane = x + c * g.h * g.w;
        for (int64_t off = 0; off < width;) {
          const int64_t j = j0 + off, oy = r.y0 + j / rw, ox0 = r.x0 + j % rw;
          const int64_t len = std::min(width - off, r.x1 - ox0);
          const float* src = src_plane + (oy * g.sh + dy) * g.w + ox0 * g.sw + dx;
          if (g.sw == 1) {
            std::memcpy(row + off, src, static_cast<size_t>(len) * sizeof(float));
          } else {
            for (int64_t q = 0; q < len; ++q) row[off + q] = src[q * g.sw];
          }
          off += len;
        }
        std::fill(row + width, row + nr, 0.0f);
      }
    };
    // B is the input itself, read in place, where the tap's input rows are whole rows (stride 1,
    // no column shift, input as wide as the output, whole output rows); packed otherwise.
    const bool in_place = g.sh == 1 && g.sw == 1 && dx == 0 && g.w == g.ow && rw == g.ow;
    GemmBlocking panels = blocking;
    panels.b_whole = !in_place;
    panels.b_direct = in_place;
    const float* direct_b = in_place ? x + (r.y0 + dy) * g.w : nullptr;
    if (t == 0 && plan.first_covers_output) {
      // Covers every output: writes y with the bias.
      Epilogue e;
      e.row_bias = bias;
      sgemm_panels(a[t], n, pack, y, plane, e, panels, direct_b, g.h * g.w);
      continue;
    }
    // Every other tap adds its product to y. The GEMM writes a block that is then added: an
    // epilogue residual aliasing C would read partial sums once K runs in chunks (kc).
    block.resize(static_cast<size_t>(g.oc * n));
    sgemm_panels(a[t], n, pack, block.data(), n, Epilogue{}, panels, direct_b, g.h * g.w);
    tbb::parallel_for(int64_t{0}, g.oc, [&](int64_t o) {
      for (int64_t oy = 0; oy < rh; ++oy) {
        float* dst = y + o * plane + (r.y0 + oy) * g.ow + r.x0;
        const float* src = block.data() + o * n + oy * rw;
        for (int64_t q = 0; q < rw; ++q) dst[q] += src[q];
      }
    });
  }
}

}  // namespace tessera::cpu
