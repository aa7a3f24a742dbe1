// im2col for the convolutions that run as GEMM (the depthwise kernel is SIMD code in simd.cpp).
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

}  // namespace tessera::cpu
