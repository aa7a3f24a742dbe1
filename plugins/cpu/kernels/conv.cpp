// im2col for the convolutions that run as GEMM, whole-matrix and one packed B panel at a time (the
// depthwise kernel is SIMD code in simd.cpp).
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>

#include "kernels/kernels.hpp"

namespace tessera::cpu {
namespace {
constexpr int64_t kMaxNR = 32;  // widest compiled tile
}  // namespace

void im2col(const float* x, const ConvGeometry& g, int64_t c_begin, int64_t c_count, float* col) {
  const int64_t cols = g.oh * g.ow;
  tbb::parallel_for(int64_t{0}, c_count, [&](int64_t ci) {
    const float* plane = x + (c_begin + ci) * g.h * g.w;
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        float* dst = col + ((ci * g.kh + ky) * g.kw + kx) * cols;
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          const int64_t iy = oy * g.sh - g.pt + ky;
          float* row = dst + oy * g.ow;
          if (iy < 0 || iy >= g.h) {
            std::fill(row, row + g.ow, 0.0f);
            continue;
          }
          const float* src = plane + iy * g.w;
          for (int64_t ox = 0; ox < g.ow; ++ox) {
            const int64_t ix = ox * g.sw - g.pl + kx;
            row[ox] = ix >= 0 && ix < g.w ? src[ix] : 0.0f;
          }
        }
      }
    }
  });
}

namespace {
// im2col_panel with the panel width a compile-time constant where NR > 0 (16 and 32, the tiles'
// widths): a run-time width made packing 16-wide panels ~15% slower than the fixed kNR did.
template <int64_t NR>
void Im2colPanelT(const float* x, const ConvGeometry& g, int64_t c_begin, int64_t c_count,
                  int64_t j0, float* panel, int64_t nr_any) {
  const int64_t nr = NR > 0 ? NR : nr_any;
  const int64_t n = g.oh * g.ow;
  const int64_t width = std::max<int64_t>(0, std::min(nr, n - j0));
  // The panel's columns split into runs that share one output row.
  struct Run {
    int64_t oy, ox0, len, off;
  };
  Run runs[kMaxNR];
  int64_t nruns = 0;
  for (int64_t off = 0; off < width;) {
    const int64_t j = j0 + off, oy = j / g.ow, ox0 = j % g.ow;
    const int64_t len = std::min(width - off, g.ow - ox0);
    runs[nruns++] = Run{oy, ox0, len, off};
    off += len;
  }
  // x / sw for x >= 0 without a 64-bit divide for strides 1 and 2: two divides per panel row
  // (K rows per panel, 147 for a 7x7 stem) were a large part of packing, and a 64-bit idiv costs
  // 40-90 cycles on Skylake-era Xeons.
  auto div_sw = [&g](int64_t v) { return g.sw == 1 ? v : g.sw == 2 ? v >> 1 : v / g.sw; };
  float* row = panel;
  for (int64_t ci = 0; ci < c_count; ++ci) {
    const float* plane = x + (c_begin + ci) * g.h * g.w;
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      for (int64_t kx = 0; kx < g.kw; ++kx, row += nr) {
        for (int64_t r = 0; r < nruns; ++r) {
          const Run& run = runs[r];
          float* dst = row + run.off;
          const int64_t iy = run.oy * g.sh - g.pt + ky;
          if (iy < 0 || iy >= g.h) {
            std::fill(dst, dst + run.len, 0.0f);
            continue;
          }
          // ix = (ox0 + t) * sw - pl + kx must lie in [0, w): t in [lo, hi).
          const int64_t base = run.ox0 * g.sw - g.pl + kx;
          int64_t lo = base >= 0 ? 0 : div_sw(-base + g.sw - 1);
          int64_t hi = g.w - 1 - base >= 0 ? div_sw(g.w - 1 - base) + 1 : 0;
          lo = std::min(lo, run.len);
          hi = std::max(lo, std::min(hi, run.len));
          const float* src = plane + iy * g.w + (base + lo * g.sw);
          std::fill(dst, dst + lo, 0.0f);
          if (g.sw == 1) {
            // Runs are at most nr floats: 16 or 32 are one fixed-size copy (vector moves), others
            // 4 floats at a time; std::copy called memmove per run, which with the zero fills was
            // a third of a 3x3 conv's time. A 16-float run may start past padding (lo > 0) in a
            // 32-wide panel.
            const int64_t len = hi - lo;
            if (len == 16) {
              std::memcpy(dst + lo, src, sizeof(float) * 16);
            } else if (len == 32) {
              std::memcpy(dst + lo, src, sizeof(float) * 32);
            } else {
              int64_t t = 0;
              for (; t + 4 <= len; t += 4) std::memcpy(dst + lo + t, src + t, sizeof(float) * 4);
              for (; t < len; ++t) dst[lo + t] = src[t];
            }
          } else if (g.sw == 2 && hi - lo > 16) {
            // Stride-2 stems (C = 3, K = 27 or 147), where packing is ~40% of the conv: runs of
            // a 32-wide panel de-interleave with SIMD (all panels of resnet's 7x7 stem: 1.27 ->
            // 1.08 ms on Zen 4); at 16 or fewer the dispatched call cost more than it saved.
            gather_stride2(src, hi - lo, plane + g.h * g.w - src, dst + lo);
          } else {
            for (int64_t t = lo; t < hi; ++t) dst[t] = src[(t - lo) * g.sw];
          }
          std::fill(dst + hi, dst + run.len, 0.0f);
        }
        std::fill(row + width, row + nr, 0.0f);
      }
    }
  }
}
}  // namespace

void im2col_panel(const float* x, const ConvGeometry& g, int64_t c_begin, int64_t c_count,
                  int64_t j0, float* panel, int64_t nr) {
  if (nr == 16) return Im2colPanelT<16>(x, g, c_begin, c_count, j0, panel, nr);
  if (nr == 32) return Im2colPanelT<32>(x, g, c_begin, c_count, j0, panel, nr);
  Im2colPanelT<0>(x, g, c_begin, c_count, j0, panel, nr);
}

void copy_panel(const float* b, int64_t k, int64_t n, int64_t ld, int64_t j0, float* panel,
                int64_t nr) {
  const int64_t width = std::max<int64_t>(0, std::min(nr, n - j0));
  for (int64_t q = 0; q < k; ++q) {
    const float* src = b + q * ld + j0;
    float* row = panel + q * nr;
    // A fixed-size memcpy is one or two vector moves; the element loop compiled to scalar moves.
    if (width == 16) {
      std::memcpy(row, src, sizeof(float) * 16);
    } else if (width == 32) {
      std::memcpy(row, src, sizeof(float) * 32);
    } else {
      for (int64_t j = 0; j < width; ++j) row[j] = src[j];
      std::fill(row + width, row + nr, 0.0f);
    }
  }
}

}  // namespace tessera::cpu
