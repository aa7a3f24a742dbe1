// Winograd F(2x2, 3x3) convolution (3x3, stride 1, dilation 1, group 1): weights transformed once
// (U = G g G^T, 16 packed [M x C] matrices), then per task of output tiles the input tiles are
// transformed (V = B^T d B) into 16 [C x tiles] matrices, multiplied by the SGEMM micro-kernel
// (16 products [M x C] x [C x tiles]) and transformed back (A^T m A) with bias and clamp.
// Transforms are Highway code, vectorised across neighbouring tiles of one tile row.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/winograd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>

#include "kernels/kernels.hpp"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Tile rows are 7..28 tiles wide in the zoo nets: 8 lanes waste less on the short ones than 16.
using DW = hn::CappedTag<float, 8>;

// The tiles of a task, [t0, t0 + nt) in row-major tile order, split into runs of one tile row.
template <class Fn>
HWY_ATTR HWY_INLINE void ForEachSegment(int64_t tw, int64_t t0, int64_t nt, Fn fn) {
  for (int64_t t = t0; t < t0 + nt;) {
    const int64_t ty = t / tw, tx0 = t % tw;
    const int64_t len = std::min(tw - tx0, t0 + nt - t);
    fn(ty, tx0, len, t - t0);
    t += len;
  }
}

// v[xi][c][col] (xi = 4 i + j, row stride ldv, xi stride c * ldv) for the task's tiles. Each of the
// 4 input rows of a tile row is copied zero-padded into pad (so reads outside the plane are
// zero), then de-interleaved into even/odd columns: tile tx's 4 columns are even[tx], odd[tx],
// even[tx + 1], odd[tx + 1]. Vectors may run past the segment's end into columns the next segment
// (or nobody) overwrites; ldv leaves room for that.
HWY_ATTR void WinogradInput(const float* x, const ConvGeometry* geom, int64_t tw, int64_t t0,
                            int64_t nt, float* v, int64_t ldv, float* pad) {
  const ConvGeometry& g = *geom;
  const DW d;
  using V = hn::Vec<DW>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t xi_stride = g.c * ldv;
  ForEachSegment(tw, t0, nt, [&](int64_t ty, int64_t tx0, int64_t len, int64_t col0) {
    const int64_t width = 2 * (len + lanes) + 4;  // padded floats per row, with vector slack
    const int64_t ix0 = 2 * tx0 - g.pl;
    const int64_t lo = std::max<int64_t>(0, -ix0);
    const int64_t hi = std::max(lo, std::min<int64_t>(2 * len + 2, g.w - ix0));
    for (int64_t c = 0; c < g.c; ++c) {
      const float* plane = x + c * g.h * g.w;
      for (int64_t r = 0; r < 4; ++r) {
        float* row = pad + r * width;
        const int64_t iy = 2 * ty - g.pt + r;
        if (iy < 0 || iy >= g.h) {
          std::fill(row, row + width, 0.0f);
          continue;
        }
        std::fill(row, row + lo, 0.0f);
        std::memcpy(row + lo, plane + iy * g.w + ix0 + lo, sizeof(float) * (hi - lo));
        std::fill(row + hi, row + width, 0.0f);
      }
      float* dst = v + c * ldv + col0;
      for (int64_t tx = 0; tx < len; tx += lanes) {
        V h[4][4];
        for (int64_t r = 0; r < 4; ++r) {
          V e0, o0, e1, o1;
          hn::LoadInterleaved2(d, pad + r * width + 2 * tx, e0, o0);
          hn::LoadInterleaved2(d, pad + r * width + 2 * tx + 2, e1, o1);
          h[r][0] = hn::Sub(e0, e1);
          h[r][1] = hn::Add(o0, e1);
          h[r][2] = hn::Sub(e1, o0);
          h[r][3] = hn::Sub(o0, o1);
        }
        for (int64_t j = 0; j < 4; ++j) {
          hn::StoreU(hn::Sub(h[0][j], h[2][j]), d, dst + (0 + j) * xi_stride + tx);
          hn::StoreU(hn::Add(h[1][j], h[2][j]), d, dst + (4 + j) * xi_stride + tx);
          hn::StoreU(hn::Sub(h[2][j], h[1][j]), d, dst + (8 + j) * xi_stride + tx);
          hn::StoreU(hn::Sub(h[1][j], h[3][j]), d, dst + (12 + j) * xi_stride + tx);
        }
      }
    }
  });
}

// y from mo[xi][m][col] (row stride ldm, xi stride m_count * ldm): each tile's 2x2 outputs, bias,
// clamp. Whole vectors of tiles store interleaved; the right/bottom edge (odd OW/OH, a partial
// last vector) goes through a small buffer.
HWY_ATTR void WinogradOutput(const float* mo, int64_t ldm, const ConvGeometry* geom, int64_t tw,
                             int64_t t0, int64_t nt, const float* bias, const float* residual,
                             float lo, float hi, float* y) {
  const ConvGeometry& g = *geom;
  const DW d;
  using V = hn::Vec<DW>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t xi_stride = g.oc * ldm;
  const V vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  ForEachSegment(tw, t0, nt, [&](int64_t ty, int64_t tx0, int64_t len, int64_t col0) {
    const int64_t oy = 2 * ty;
    const bool two_rows = oy + 1 < g.oh;
    for (int64_t m = 0; m < g.oc; ++m) {
      const float* src = mo + m * ldm + col0;
      const V b = hn::Set(d, bias ? bias[m] : 0.0f);
      float* out0 = y + m * g.oh * g.ow + oy * g.ow;
      float* out1 = out0 + g.ow;
      const float* res0 = residual ? residual + m * g.oh * g.ow + oy * g.ow : nullptr;
      for (int64_t tx = 0; tx < len; tx += lanes) {
        V t[2][4];
        for (int64_t j = 0; j < 4; ++j) {
          const V m0 = hn::LoadU(d, src + (0 + j) * xi_stride + tx);
          const V m1 = hn::LoadU(d, src + (4 + j) * xi_stride + tx);
          const V m2 = hn::LoadU(d, src + (8 + j) * xi_stride + tx);
          const V m3 = hn::LoadU(d, src + (12 + j) * xi_stride + tx);
          t[0][j] = hn::Add(hn::Add(m0, m1), m2);
          t[1][j] = hn::Sub(hn::Sub(m1, m2), m3);
        }
        V out[2][2];
        for (int64_t r = 0; r < 2; ++r) {
          out[r][0] = hn::Add(hn::Add(hn::Add(t[r][0], t[r][1]), t[r][2]), b);
          out[r][1] = hn::Add(hn::Sub(hn::Sub(t[r][1], t[r][2]), t[r][3]), b);
        }
        const int64_t ox = 2 * (tx0 + tx);
        const bool whole = tx + lanes <= len && ox + 2 * lanes <= g.ow;
        if (res0 != nullptr) {
          // The residual's even and odd columns, through a buffer at the edges.
          for (int64_t r = 0; r < (two_rows ? 2 : 1); ++r) {
            const float* src_res = res0 + r * g.ow + ox;
            alignas(64) float rbuf[2 * 16];
            if (!whole) {
              const int64_t cols = std::min(2 * std::min(lanes, len - tx), g.ow - ox);
              std::memcpy(rbuf, src_res, sizeof(float) * cols);
              std::fill(rbuf + cols, rbuf + 2 * 16, 0.0f);
              src_res = rbuf;
            }
            V even, odd;
            hn::LoadInterleaved2(d, src_res, even, odd);
            out[r][0] = hn::Add(out[r][0], even);
            out[r][1] = hn::Add(out[r][1], odd);
          }
        }
        for (int64_t r = 0; r < 2; ++r) {
          out[r][0] = hn::Min(hn::Max(out[r][0], vlo), vhi);
          out[r][1] = hn::Min(hn::Max(out[r][1], vlo), vhi);
        }
        if (whole) {
          hn::StoreInterleaved2(out[0][0], out[0][1], d, out0 + ox);
          if (two_rows) hn::StoreInterleaved2(out[1][0], out[1][1], d, out1 + ox);
          continue;
        }
        alignas(64) float buf[2][2 * 16];
        hn::StoreInterleaved2(out[0][0], out[0][1], d, buf[0]);
        hn::StoreInterleaved2(out[1][0], out[1][1], d, buf[1]);
        const int64_t cols = std::min(2 * std::min(lanes, len - tx), g.ow - ox);
        std::memcpy(out0 + ox, buf[0], sizeof(float) * cols);
        if (two_rows) std::memcpy(out1 + ox, buf[1], sizeof(float) * cols);
      }
    }
  });
}

HWY_ATTR int64_t WinogradLanes() {
  return static_cast<int64_t>(hn::Lanes(DW()));
}

}  // namespace HWY_NAMESPACE
}  // namespace tessera::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <tbb/parallel_for.h>

#include <stdexcept>

namespace tessera::cpu {

HWY_EXPORT(WinogradInput);
HWY_EXPORT(WinogradOutput);
HWY_EXPORT(WinogradLanes);

bool winograd_applies(const ConvGeometry& g) {
  return g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && g.group == 1 && g.oh > 0 && g.ow > 0 &&
         g.c > 0 && g.oc > 0 && !g.dilated();
}

void winograd_weights(const float* w, int64_t m, int64_t c, int64_t mr, WinogradWeights* out) {
  // G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1], in double so U carries no extra rounding.
  static const double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  std::vector<float> u(static_cast<size_t>(16 * m * c));
  for (int64_t o = 0; o < m; ++o) {
    for (int64_t i = 0; i < c; ++i) {
      const float* g = w + (o * c + i) * 9;
      double t[4][3];  // G g
      for (int r = 0; r < 4; ++r) {
        for (int k = 0; k < 3; ++k) {
          t[r][k] = kG[r][0] * g[k] + kG[r][1] * g[3 + k] + kG[r][2] * g[6 + k];
        }
      }
      for (int r = 0; r < 4; ++r) {
        for (int s = 0; s < 4; ++s) {
          const double v = t[r][0] * kG[s][0] + t[r][1] * kG[s][1] + t[r][2] * kG[s][2];
          u[static_cast<size_t>(((r * 4 + s) * m + o) * c + i)] = static_cast<float>(v);
        }
      }
    }
  }
  out->m = m;
  out->c = c;
  out->u.assign(16, PackedMatrix{});
  for (int64_t xi = 0; xi < 16; ++xi) pack_a(u.data() + xi * m * c, m, c, c, 1, &out->u[xi], mr);
}

void winograd_conv(const float* x, const ConvGeometry& g, const WinogradWeights& u,
                   const float* bias, const float* residual, float lo, float hi,
                   const WinogradBlocking& blocking, float* y) {
  if (!winograd_applies(g) || u.m != g.oc || u.c != g.c || u.u.size() != 16) {
    throw std::invalid_argument(
        "cpu kernels: winograd_conv needs a 3x3 stride-1 group-1 conv "
        "and weights transformed for its channels");
  }
  const int64_t nr = blocking.nr;
  const int64_t th = (g.oh + 1) / 2, tw = (g.ow + 1) / 2, tiles = th * tw;
  // Tiles per task: a whole number of B panels, no more than the conv has.
  int64_t nt = std::max<int64_t>(nr, (blocking.tiles + nr - 1) / nr * nr);
  nt = std::min(nt, (tiles + nr - 1) / nr * nr);
  const int64_t lanes = HWY_DYNAMIC_DISPATCH(WinogradLanes)();
  const int64_t ldv = nt + lanes;
  const int64_t v_floats = 16 * g.c * ldv + lanes;
  const int64_t m_floats = 16 * g.oc * nt + lanes;
  const int64_t pad_floats = 4 * (2 * (nt + lanes) + 4);
  const int64_t tasks = (tiles + nt - 1) / nt;
  tbb::parallel_for(
      int64_t{0}, tasks,
      [&](int64_t task) {
        static thread_local std::vector<float> scratch;
        const size_t want = static_cast<size_t>(v_floats + m_floats + pad_floats);
        // Columns past the last tile are multiplied but never read back; zeroed once so they
        // hold no NaNs or denormals.
        if (scratch.size() < want) scratch.assign(want, 0.0f);
        float* v = scratch.data();
        float* mo = v + v_floats;
        float* pad = mo + m_floats;
        const int64_t t0 = task * nt, count = std::min(nt, tiles - t0);
        HWY_DYNAMIC_DISPATCH(WinogradInput)(x, &g, tw, t0, count, v, ldv, pad);
        for (int64_t xi = 0; xi < 16; ++xi) {
          gemm_block_direct(u.u[xi], v + xi * g.c * ldv, ldv, nt, nr, mo + xi * g.oc * nt, nt);
        }
        HWY_DYNAMIC_DISPATCH(WinogradOutput)(mo, nt, &g, tw, t0, count, bias, residual, lo, hi, y);
      },
      tbb::simple_partitioner());
}

}  // namespace tessera::cpu
#endif  // HWY_ONCE
