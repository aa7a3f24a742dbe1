// Convolution helpers that are not GEMM: im2col (feeds the packed SGEMM) and the depthwise
// direct kernel. Inner loops run over contiguous output columns so the compiler vectorises them.
#include <tbb/parallel_for.h>

#include <algorithm>

#include "kernels/kernels.hpp"

namespace tessera::cpu {

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

// One output row of one channel. Columns whose whole window is inside the input take the
// branch-free path; the few at the borders check bounds.
template <int64_t SW>
void depthwise_row(const float* plane, const float* wk, const ConvGeometry& g, int64_t oy,
                   float bias, float lo, float hi, float* out) {
  const int64_t sw = SW > 0 ? SW : g.sw;
  // Interior columns: ox*sw - pl >= 0 and ox*sw - pl + kw - 1 < w.
  const int64_t x_begin = std::min(g.ow, (g.pl + sw - 1) / sw);
  int64_t x_end = g.w - g.kw + g.pl >= 0 ? (g.w - g.kw + g.pl) / sw + 1 : 0;
  x_end = std::max(x_begin, std::min(g.ow, x_end));
  for (int64_t ox = 0; ox < g.ow; ++ox) out[ox] = bias;
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    const int64_t iy = oy * g.sh - g.pt + ky;
    if (iy < 0 || iy >= g.h) continue;
    const float* src = plane + iy * g.w;
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      const float wv = wk[ky * g.kw + kx];
      const float* s = src + kx - g.pl;
      for (int64_t ox = x_begin; ox < x_end; ++ox) out[ox] += wv * s[ox * sw];
      for (int64_t ox = 0; ox < x_begin; ++ox) {
        const int64_t ix = ox * sw - g.pl + kx;
        if (ix >= 0 && ix < g.w) out[ox] += wv * src[ix];
      }
      for (int64_t ox = x_end; ox < g.ow; ++ox) {
        const int64_t ix = ox * sw - g.pl + kx;
        if (ix >= 0 && ix < g.w) out[ox] += wv * src[ix];
      }
    }
  }
  for (int64_t ox = 0; ox < g.ow; ++ox) out[ox] = std::min(std::max(out[ox], lo), hi);
}

}  // namespace

void depthwise_conv(const float* x, const float* w, const float* bias, const ConvGeometry& g,
                    float lo, float hi, float* y) {
  tbb::parallel_for(int64_t{0}, g.c, [&](int64_t c) {
    const float* plane = x + c * g.h * g.w;
    const float* wk = w + c * g.kh * g.kw;
    const float b = bias ? bias[c] : 0.0f;
    float* out = y + c * g.oh * g.ow;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      // Strides 1 and 2 get their own instantiation so the inner loop has a constant stride.
      if (g.sw == 1) {
        depthwise_row<1>(plane, wk, g, oy, b, lo, hi, out + oy * g.ow);
      } else if (g.sw == 2) {
        depthwise_row<2>(plane, wk, g, oy, b, lo, hi, out + oy * g.ow);
      } else {
        depthwise_row<0>(plane, wk, g, oy, b, lo, hi, out + oy * g.ow);
      }
    }
  });
}

}  // namespace tessera::cpu
