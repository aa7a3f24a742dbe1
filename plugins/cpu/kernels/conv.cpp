// im2col for the convolutions that run as GEMM, whole-matrix and one packed B panel at a time (the
// depthwise kernel is SIMD code in simd.cpp).
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

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
          const int64_t iy = oy * g.sh - g.pt + ky * g.dil_h;
          float* row = dst + oy * g.ow;
          if (iy < 0 || iy >= g.h) {
            std::fill(row, row + g.ow, 0.0f);
            continue;
          }
          const float* src = plane + iy * g.w;
          for (int64_t ox = 0; ox < g.ow; ++ox) {
            const int64_t ix = ox * g.sw - g.pl + kx * g.dil_w;
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
// plane_of(i) is the H x W plane behind rows (i, ky, kx), nullptr for an all-zero plane (a 3-D
// conv's depth tap in padding).
template <int64_t NR, class PlaneOf>
void Im2colPanelT(const PlaneOf& plane_of, int64_t count, const ConvGeometry& g, int64_t j0,
                  float* panel, int64_t nr_any) {
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
  for (int64_t ci = 0; ci < count; ++ci) {
    const float* plane = plane_of(ci);
    if (plane == nullptr) {
      std::fill(row, row + g.kh * g.kw * nr, 0.0f);
      row += g.kh * g.kw * nr;
      continue;
    }
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      for (int64_t kx = 0; kx < g.kw; ++kx, row += nr) {
        for (int64_t r = 0; r < nruns; ++r) {
          const Run& run = runs[r];
          float* dst = row + run.off;
          const int64_t iy = run.oy * g.sh - g.pt + ky * g.dil_h;
          if (iy < 0 || iy >= g.h) {
            std::fill(dst, dst + run.len, 0.0f);
            continue;
          }
          // ix = (ox0 + t) * sw - pl + kx * dil_w must lie in [0, w): t in [lo, hi).
          const int64_t base = run.ox0 * g.sw - g.pl + kx * g.dil_w;
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

template <class PlaneOf>
void im2col_panel_of(const PlaneOf& plane_of, int64_t count, const ConvGeometry& g, int64_t j0,
                     float* panel, int64_t nr) {
  if (nr == 16) return Im2colPanelT<16>(plane_of, count, g, j0, panel, nr);
  if (nr == 32) return Im2colPanelT<32>(plane_of, count, g, j0, panel, nr);
  Im2colPanelT<0>(plane_of, count, g, j0, panel, nr);
}
}  // namespace

void im2col_panel(const float* x, const ConvGeometry& g, int64_t c_begin, int64_t c_count,
                  int64_t j0, float* panel, int64_t nr) {
  const float* first = x + c_begin * g.h * g.w;
  const int64_t plane = g.h * g.w;
  im2col_panel_of([first, plane](int64_t ci) { return first + ci * plane; }, c_count, g, j0, panel,
                  nr);
}

void im2col_panel_planes(const float* const* planes, int64_t count, const ConvGeometry& g,
                         int64_t j0, float* panel, int64_t nr) {
  im2col_panel_of([planes](int64_t i) { return planes[i]; }, count, g, j0, panel, nr);
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

bool phase_gemm_applies(const ConvGeometry& g) {
  return g.group == 1 && g.sh == g.sw && (g.sh == 1 || g.sh == 2) && g.oh > 0 && g.ow > 0 &&
         g.c > 0 && g.oc > 0 && g.pt >= 0 && g.pl >= 0 && !g.dilated();
}

namespace {

// The stride x stride phase planes of x (zero-padded; rows and columns cover every tap of a whole
// last tile) in per-thread scratch, and each weight row's offset into them.
struct PhasePlanes {
  const float* q;
  const int64_t* off;
  int64_t pitch;  // floats per phase-plane row
};

// A per-thread table of B row offsets (gemm_offset_rows).
std::vector<int64_t>* thread_offsets() {
  static thread_local std::vector<int64_t> offsets;
  return &offsets;
}

// fn(i) for i in [0, n): as parallel tasks, or in order on the calling thread (for callers that
// are already one of many parallel tasks and use per-thread scratch across the loop).
template <class Fn>
void for_each_index(bool parallel, int64_t n, const Fn& fn) {
  if (parallel) {
    tbb::parallel_for(int64_t{0}, n, fn);
  } else {
    for (int64_t i = 0; i < n; ++i) fn(i);
  }
}

PhasePlanes phase_planes(const float* x, const ConvGeometry& g, int64_t nr, bool parallel = true) {
  const int64_t s = g.sh;
  // Phase (py, px) row r, column j holds padded input (s r + py, s j + px). Output (oy, ox) tap
  // (ky, kx) reads padded (s oy + ky, s ox + kx): phase (ky % s, kx % s), row oy + ky / s,
  // column ox + kx / s. Rows and columns cover every tap of a whole last tile.
  const int64_t rows = g.oh + (g.kh - 1) / s;
  const int64_t pitch = (g.ow + nr - 1) / nr * nr + (g.kw - 1) / s;
  const int64_t plane = rows * pitch;
  const int64_t phases = s * s;
  static thread_local std::vector<int64_t> offsets;
  float* q = thread_scratch<struct PhaseScratch>(phases * g.c * plane);
  // Only phases some tap reads are filled (a 1x1 stride-2 conv reads one of four).
  const int64_t used_py = std::min(s, g.kh), used_px = std::min(s, g.kw);
  for_each_index(parallel, phases * g.c * rows, [&](int64_t t) {
    const int64_t r = t % rows, c = (t / rows) % g.c, ph = t / (rows * g.c);
    const int64_t py = ph / s, px = ph % s;
    if (py >= used_py || px >= used_px) return;
    float* dst = q + (ph * g.c + c) * plane + r * pitch;
    const int64_t iy = s * r + py - g.pt;
    std::fill(dst, dst + pitch, 0.0f);
    if (iy < 0 || iy >= g.h) return;
    const float* src = x + (c * g.h + iy) * g.w;
    // Column j reads input column s j + px - pl: the valid j are [j0, j1).
    const int64_t j0 = std::max<int64_t>(0, (g.pl - px + s - 1) / s);
    const int64_t last = g.w - 1 - px + g.pl;  // s j <= last
    const int64_t j1 = last < 0 ? 0 : std::min(pitch, last / s + 1);
    if (j1 <= j0) return;
    const float* from = src + s * j0 + px - g.pl;
    if (s == 1) {
      std::memcpy(dst + j0, from, sizeof(float) * static_cast<size_t>(j1 - j0));
    } else {
      gather_stride2(from, j1 - j0, src + g.w - from, dst + j0);
    }
  });
  offsets.resize(static_cast<size_t>(g.c * g.kh * g.kw));
  for (int64_t c = 0; c < g.c; ++c) {
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        const int64_t ph = (ky % s) * s + kx % s;
        offsets[static_cast<size_t>((c * g.kh + ky) * g.kw + kx)] =
            (ph * g.c + c) * plane + (ky / s) * pitch + kx / s;
      }
    }
  }
  return {q, offsets.data(), pitch};
}

}  // namespace

void phase_gemm_conv(const float* x, const ConvGeometry& g, const PackedMatrix& a,
                     const Epilogue& epilogue, int64_t nr, float* y, bool parallel) {
  const PhasePlanes p = phase_planes(x, g, nr, parallel);
  const int64_t ldc = g.oh * g.ow;
  for_each_index(parallel, g.oh, [&](int64_t oy) {
    Epilogue row = epilogue;
    if (row.residual) row.residual += oy * g.ow;
    gemm_offset_rows(a, p.q + oy * p.pitch, p.off, g.ow, nr, y + oy * g.ow, ldc, row);
  });
}

namespace {

// The driver of the row-block fusions. A producer's output (`channels` planes `width` wide) is
// consumed in `blocks` blocks; block b reads producer rows rows_of(b) = [r0, r1). Each thread
// takes one contiguous range of blocks (static partitioner) and holds its block's rows in
// scratch, [channels][most_rows][width] between kRowGuard readable zeros; rows the previous block
// of the range computed too move to the front instead of being computed again (a row shared by
// two blocks is computed twice only where two threads' ranges meet). produce(from, to, dst, ld)
// writes producer rows [from, to) at dst (channel stride ld); consume(b, rows, ld, r0, r1) reads
// the block's rows.
constexpr int64_t kRowGuard = 16;

template <class RowsOf, class Produce, class Consume>
void fused_row_blocks(int64_t blocks, int64_t channels, int64_t width, int64_t most_rows,
                      RowsOf rows_of, Produce produce, Consume consume) {
  const int64_t ld = most_rows * width;
  tbb::parallel_for(
      tbb::blocked_range<int64_t>(0, blocks),
      [&](const auto& range) {
        float* scratch = thread_scratch<struct FusedRows>(channels * ld + 2 * kRowGuard);
        float* rows = scratch + kRowGuard;
        std::fill(scratch, rows, 0.0f);
        std::fill(rows + channels * ld, rows + channels * ld + kRowGuard, 0.0f);
        int64_t have0 = 0, have1 = 0;  // producer rows [have0, have1) are in scratch
        for (int64_t b = range.begin(); b < range.end(); ++b) {
          const auto [r0, r1] = rows_of(b);
          int64_t from = r0;
          if (have0 <= r0 && r0 < have1) {
            for (int64_t c = 0; c < channels; ++c) {
              float* plane = rows + c * ld;
              std::memmove(plane, plane + (r0 - have0) * width,
                           sizeof(float) * static_cast<size_t>((have1 - r0) * width));
            }
            from = have1;
          }
          if (from < r1) produce(from, r1, rows + (from - r0) * width, ld);
          have0 = r0;
          have1 = r1;
          consume(b, rows, ld, r0, r1);
        }
      },
      tbb::static_partitioner());
}

// Producer rows of the phase-plane conv g: its output rows [from, to) at dst (channel stride ld).
auto phase_rows(const PhasePlanes& p, const ConvGeometry& g, const PackedMatrix& a, int64_t nr,
                const Epilogue& epilogue) {
  return [&p, &g, &a, nr, &epilogue](int64_t from, int64_t to, float* dst, int64_t ld) {
    for (int64_t r = from; r < to; ++r) {
      gemm_offset_rows(a, p.q + r * p.pitch, p.off, g.ow, nr, dst + (r - from) * g.ow, ld,
                       epilogue);
    }
  };
}

// Producer rows of the 1x1 stride-1 conv pw on x: columns from * w .. to * w of a K x (H W) GEMM
// whose B rows are the input planes, read in place. A run that would read past the end of the
// input (whole nr-wide tiles) reads a zero-padded copy instead.
auto pointwise_rows(const float* x, const ConvGeometry& pw, const PackedMatrix& a, int64_t nr,
                    const Epilogue& epilogue) {
  return [x, &pw, &a, nr, &epilogue](int64_t from, int64_t to, float* dst, int64_t ld) {
    const int64_t plane = pw.h * pw.w, k = a.cols;
    const int64_t n = (to - from) * pw.w, padded = (n + nr - 1) / nr * nr;
    const float* b0 = x + from * pw.w;
    std::vector<int64_t>& off = *thread_offsets();
    off.resize(static_cast<size_t>(k));
    for (int64_t p = 0; p < k; ++p) off[static_cast<size_t>(p)] = p * plane;
    if (from * pw.w + padded > plane) {
      float* copy = thread_scratch<struct PointwiseTail>(k * padded);
      for (int64_t p = 0; p < k; ++p) {
        std::memcpy(copy + p * padded, b0 + p * plane, sizeof(float) * static_cast<size_t>(n));
        std::fill(copy + p * padded + n, copy + (p + 1) * padded, 0.0f);
        off[static_cast<size_t>(p)] = p * padded;
      }
      b0 = copy;
    }
    gemm_offset_rows(a, b0, off.data(), n, nr, dst, ld, epilogue);
  };
}

// Blocks of kConvDepthwiseRows depthwise rows over the producer's output (channels dw.c): the
// producer rows [s oy - 1, s oy + 1] they read, clipped.
template <class Produce>
void depthwise_row_blocks(const ConvGeometry& dw, const float* dw_weights, const float* dw_bias,
                          float lo, float hi, float* y, Produce produce) {
  const int64_t s = dw.sh, rows = kConvDepthwiseRows;
  fused_row_blocks((dw.oh + rows - 1) / rows, dw.c, dw.w, s * (rows - 1) + 3,
                   [&](int64_t b) {
                     const int64_t oy0 = b * rows, oy1 = std::min(dw.oh, oy0 + rows);
                     return std::make_pair(std::max<int64_t>(0, s * oy0 - 1),
                                           std::min(dw.h, s * (oy1 - 1) + 2));
                   },
                   produce,
                   [&](int64_t b, const float* in, int64_t ld, int64_t r0, int64_t r1) {
                     const int64_t oy0 = b * rows, oy1 = std::min(dw.oh, oy0 + rows);
                     depthwise_rows_3x3(in, ld, r0, r1, dw, dw_weights, dw_bias, lo, hi,
                                        y + oy0 * dw.ow, dw.oh * dw.ow, oy0, oy1, 0, dw.c);
                   });
}

}  // namespace

bool phase_gemm_pool_applies(const ConvGeometry& g, const ConvGeometry& pool) {
  return phase_gemm_applies(g) && max_pool_3x3s2_applies(pool) && pool.c == g.oc &&
         pool.h == g.oh && pool.w == g.ow;
}

void phase_gemm_conv_pool(const float* x, const ConvGeometry& g, const PackedMatrix& a,
                          const Epilogue& epilogue, int64_t nr, const ConvGeometry& pool,
                          float* y) {
  const PhasePlanes p = phase_planes(x, g, nr);
  const int64_t rows = kConvPoolRows;
  fused_row_blocks(
      (pool.oh + rows - 1) / rows, g.oc, g.ow, (rows - 1) * pool.sh + 3,
      // Conv rows that pooled rows [py0, py1) read: sh py - pt .. sh py - pt + 2, clipped.
      [&](int64_t b) {
        const int64_t py0 = b * rows, py1 = std::min(pool.oh, py0 + rows);
        return std::make_pair(std::max<int64_t>(0, py0 * pool.sh - pool.pt),
                              std::min(g.oh, (py1 - 1) * pool.sh - pool.pt + 3));
      },
      phase_rows(p, g, a, nr, epilogue),
      [&](int64_t b, const float* in, int64_t ld, int64_t r0, int64_t r1) {
        // Pooled row py0 + i starts at local row sh i - (pt + r0 - sh py0).
        const int64_t py0 = b * rows, py1 = std::min(pool.oh, py0 + rows);
        ConvGeometry local = pool;
        local.h = r1 - r0;
        local.oh = py1 - py0;
        local.pt = pool.pt + r0 - py0 * pool.sh;
        pool2d_planes(in, ld, max_pool_window(local), -std::numeric_limits<float>::infinity(),
                      std::numeric_limits<float>::infinity(), y + py0 * pool.ow, pool.oh * pool.ow,
                      0, g.oc);
      });
}

bool pointwise_depthwise_applies(const ConvGeometry& pw, const ConvGeometry& dw) {
  const bool pointwise = pw.kh == 1 && pw.kw == 1 && pw.sh == 1 && pw.sw == 1 && pw.pt == 0 &&
                         pw.pl == 0 && pw.group == 1 && pw.oh == pw.h && pw.ow == pw.w;
  return pointwise && !pw.dilated() && depthwise_rows_3x3_applies(dw) && dw.c == pw.oc && dw.h == pw.oh &&
         dw.w == pw.ow;
}

void pointwise_depthwise_conv(const float* x, const ConvGeometry& pw, const PackedMatrix& a,
                              const Epilogue& epilogue, int64_t nr, const ConvGeometry& dw,
                              const float* dw_weights, const float* dw_bias, float lo, float hi,
                              float* y) {
  depthwise_row_blocks(dw, dw_weights, dw_bias, lo, hi, y, pointwise_rows(x, pw, a, nr, epilogue));
}

}  // namespace tessera::cpu
