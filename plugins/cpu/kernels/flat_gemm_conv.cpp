// flat_gemm_conv: group-1 stride-1 convs (3x3 and other windows, dilated or not) as an implicit
// GEMM over a zero-padded copy of the input whose planes are flattened with row pitch
// P = OW + EW - 1 (EW, EH: the window's extent, (taps - 1) * dilation + 1). Output (oy, ox) is
// flat column j = oy * P + ox, and window tap (c, ky, kx) reads the padded copy at the constant
// offset c * plane + ky * dil_h * P + kx * dil_w from j, so every B row is a unit-stride run read
// in place (gemm_offset_rows): no im2col panels, no Winograd transforms. Tiles run across row
// ends, so narrow maps (7, 13, 14 wide) fill whole tiles; only the EW - 1 pad columns of each P
// are computed in vain, and they are dropped as a task's block of C is copied from per-thread
// scratch into the output with the residual and the clamp. Dilated convs are a schedule the tuner
// may pick (ops/conv.cpp keeps im2col as their default).
//
// Why not Winograd or phase planes for these: densenet's 3x3 128 -> 32 convs have 9x more input
// channels than output channels, so Winograd's input transform (16 x 128 values per 2x2 tile) cost
// more than its 32-row products saved; phase planes compute row by row in whole tiles (a 7-wide
// row fills 7 of a 16-wide tile) and give a task one output row.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>

#include "kernels/kernels.hpp"

namespace tessera::cpu {

bool flat_gemm_conv_applies(const ConvGeometry& g) {
  return g.group == 1 && g.sh == 1 && g.sw == 1 && g.kh * g.kw > 1 && g.pt >= 0 && g.pl >= 0 &&
         g.oh > 0 && g.ow > 0 && g.c > 0 && g.oc > 0 && g.oh + g.extent_h() - 1 >= g.pt + g.h &&
         g.ow + g.extent_w() - 1 >= g.pl + g.w;
}

void flat_gemm_conv_pack(const float* w, const ConvGeometry& g, int64_t mc, int64_t mr,
                         FlatConvWeights* out) {
  const int64_t k = g.c * g.kh * g.kw;
  out->mc = std::max<int64_t>(mr, (mc + mr - 1) / mr * mr);
  out->blocks.clear();
  for (int64_t i0 = 0; i0 < g.oc; i0 += out->mc) {
    out->blocks.emplace_back();
    pack_a(w + i0 * k, std::min(out->mc, g.oc - i0), k, k, 1, &out->blocks.back(), mr);
  }
}

void flat_gemm_conv(const float* x, const ConvGeometry& g, const FlatConvWeights& a,
                    const Epilogue& epilogue, int64_t nc, int64_t nr, float* y) {
  const int64_t pitch = g.ow + g.extent_w() - 1, rows = g.oh + g.extent_h() - 1;
  const int64_t plane = rows * pitch;
  const int64_t n = (g.oh - 1) * pitch + g.ow;  // flat columns up to the last output
  nc = std::max(nr, (nc + nr - 1) / nr * nr);
  // The last tile reads up to nr - 1 columns past n of the last plane: zeros after it.
  const int64_t slack = nr + g.extent_w();
  // The padded copy in the calling thread's scratch: every task reads all of it.
  float* q = thread_scratch<struct FlatConvPlanes>(g.c * plane + slack);
  tbb::parallel_for(int64_t{0}, g.c, [&](int64_t c) {
    float* dst = q + c * plane;
    const float* src = x + c * g.h * g.w;
    std::fill(dst, dst + g.pt * pitch, 0.0f);
    for (int64_t r = 0; r < g.h; ++r) {
      float* row = dst + (g.pt + r) * pitch;
      std::fill(row, row + g.pl, 0.0f);
      std::memcpy(row + g.pl, src + r * g.w, sizeof(float) * static_cast<size_t>(g.w));
      std::fill(row + g.pl + g.w, row + pitch, 0.0f);
    }
    std::fill(dst + (g.pt + g.h) * pitch, dst + plane, 0.0f);
  });
  std::fill(q + g.c * plane, q + g.c * plane + slack, 0.0f);

  std::vector<int64_t> off(static_cast<size_t>(g.c * g.kh * g.kw));
  for (int64_t c = 0; c < g.c; ++c) {
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        off[static_cast<size_t>((c * g.kh + ky) * g.kw + kx)] =
            c * plane + ky * g.dil_h * pitch + kx * g.dil_w;
      }
    }
  }

  const int64_t ldy = g.oh * g.ow;
  const int64_t row_blocks = static_cast<int64_t>(a.blocks.size());
  const int64_t col_blocks = (n + nc - 1) / nc;
  const bool residual = epilogue.residual != nullptr;
  // Tasks of one column block are adjacent, so the threads share its B rows in L3.
  tbb::parallel_for(int64_t{0}, row_blocks * col_blocks, [&](int64_t t) {
    const int64_t rb = t % row_blocks, j0 = (t / row_blocks) * nc;
    const int64_t i0 = rb * a.mc;
    const PackedMatrix& ab = a.blocks[static_cast<size_t>(rb)];
    const int64_t m = ab.rows, cols = std::min(nc, n - j0);
    float* c = thread_scratch<struct FlatConvTile>(a.mc * nc);
    // With a residual the clamp waits for the copy-out, where the residual is added.
    Epilogue e;
    e.row_bias = epilogue.row_bias ? epilogue.row_bias + i0 : nullptr;
    if (!residual) {
      e.lo = epilogue.lo;
      e.hi = epilogue.hi;
    }
    gemm_offset_rows(ab, q + j0, off.data(), cols, nr, c, nc, e);
    // Copy-out: each output row's run of real columns in [j0, j0 + cols), contiguous in y.
    const int64_t oy0 = j0 / pitch, oy1 = (j0 + cols - 1) / pitch;
    int64_t y_first = -1, y_count = 0;
    for (int64_t oy = oy0; oy <= oy1; ++oy) {
      const int64_t x0 = std::max<int64_t>(0, j0 - oy * pitch);
      const int64_t x1 = std::min(g.ow, j0 + cols - oy * pitch);
      if (x1 <= x0) continue;
      const int64_t src = oy * pitch + x0 - j0, dst = oy * g.ow + x0, len = x1 - x0;
      if (y_first < 0) y_first = dst;
      y_count += len;
      for (int64_t i = 0; i < m; ++i) {
        float* out = y + (i0 + i) * ldy + dst;
        const float* from = c + i * nc + src;
        if (residual) {
          add_clamp(from, epilogue.residual + (i0 + i) * ldy + dst, out, len, epilogue.lo,
                    epilogue.hi);
        } else {
          std::memcpy(out, from, sizeof(float) * static_cast<size_t>(len));
        }
      }
    }
    if (epilogue.post != nullptr && y_count > 0) {
      unary_rows(*epilogue.post, y + i0 * ldy + y_first, ldy, m, y_count);
    }
  });
}

}  // namespace tessera::cpu
