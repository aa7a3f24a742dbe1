// Max pooling. 3x3 windows at stride 2 read the input rows directly and take their three taps from
// the even and odd lanes of column maxes (MaxPool3x3S2Row). Other windows go separably: per output
// row, the vertical max of its window's input rows (unit-stride vectors over the whole row), then
// the horizontal max over that one row, with stride 2 read from its even and odd columns; the
// -inf padding is only the two ends of one row buffer.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/pool.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <limits>

#include "kernels/kernels.hpp"

#ifndef TESSERA_CPU_POOL_WIDTH
#define TESSERA_CPU_POOL_WIDTH
namespace tessera::cpu {
constexpr int64_t kMaxPoolWidth = 32;  // widest window the SIMD kernel takes
}
#endif

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Output rows prepared together: their vertical maxes and phases are stored for all of them
// before any is read back, so the horizontal pass's unaligned loads no longer wait on stores
// still in flight (store-forwarding stalls had cost ~3x).
constexpr int64_t kPoolRows = 8;

// Floats of one row buffer; a thread's scratch holds 3 per prepared row (row, even, odd).
HWY_ATTR int64_t MaxPoolRowFloats(const ConvGeometry* g) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  // Stride 2 de-interleaves up to 2 * (ow + kw + 2 lanes) floats of the row.
  const int64_t need = g->pl + g->w + g->kw + 2 * (g->ow + g->kw + 2 * lanes);
  return (need + lanes - 1) / lanes * lanes;
}

HWY_ATTR int64_t MaxPoolScratchFloats(const ConvGeometry* g) {
  return 3 * kPoolRows * MaxPoolRowFloats(g);
}

// One plane; scratch's row ends already -inf (MaxPoolPlanes).
HWY_ATTR void MaxPoolPlane(const float* plane, const ConvGeometry* geom, float lo, float hi,
                           float* out, float* scratch) {
  const ConvGeometry& g = *geom;
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const float ninf = -std::numeric_limits<float>::infinity();
  const V vninf = hn::Set(d, ninf), vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  // Per prepared row r: row r (row[pl + x] = column x's vertical max; -inf before and after, read
  // by edge windows), then its even and odd columns.
  const int64_t rf = MaxPoolRowFloats(geom);
  auto row_of = [&](int64_t r) { return scratch + 3 * r * rf; };
  // Output column ox reads row[ox * sw + kx]: stride 1 directly, stride 2 as phase (kx & 1)'s
  // column ox + kx / 2. Offsets from the row's (stride 1) or even phase's (stride 2) start.
  const int64_t pitch = g.sw;
  int64_t tap[kMaxPoolWidth];
  for (int64_t kx = 0; kx < g.kw; ++kx) tap[kx] = (kx % pitch) * rf + kx / pitch;
  const int64_t base = pitch == 2 ? rf : 0;
  for (int64_t oy0 = 0; oy0 < g.oh; oy0 += kPoolRows) {
    const int64_t rows = std::min(kPoolRows, g.oh - oy0);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t oy = oy0 + r;
      const int64_t y0 = std::max<int64_t>(0, oy * g.sh - g.pt);
      const int64_t y1 = std::min(g.h, oy * g.sh - g.pt + g.kh);
      float* row = row_of(r);
      float* cols = row + g.pl;
      auto vertical = [&](int64_t x) {
        V m = vninf;
        for (int64_t iy = y0; iy < y1; ++iy) m = hn::Max(m, hn::LoadU(d, plane + iy * g.w + x));
        hn::StoreU(m, d, cols + x);
      };
      int64_t x = 0;
      for (; x + lanes <= g.w; x += lanes) vertical(x);
      // The last partial vector again as a whole one ending at the row's end (the overlap is
      // recomputed to the same values); a scalar tail had cost more than the rest of the row.
      if (x < g.w && g.w >= lanes) {
        vertical(g.w - lanes);
        x = g.w;
      }
      for (; x < g.w; ++x) {
        float m = ninf;
        for (int64_t iy = y0; iy < y1; ++iy) m = std::max(m, plane[iy * g.w + x]);
        cols[x] = m;
      }
    }
    // De-interleaving after all the block's vertical passes: a row's stores (the last one
    // overlapping, unaligned) are no longer in flight when the phases load them.
    const int64_t pairs = (g.ow + g.kw / 2 + 2 * lanes - 1) / lanes * lanes;
    for (int64_t r = 0; r < rows && pitch == 2; ++r) {
      const float* row = row_of(r);
      float* even = row_of(r) + rf;
      float* odd = even + rf;
      for (int64_t i = 0; i < pairs; i += lanes) {
        V e, o;
        hn::LoadInterleaved2(d, row + 2 * i, e, o);
        hn::StoreU(e, d, even + i);
        hn::StoreU(o, d, odd + i);
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      const float* src = row_of(r) + base;
      float* dst = out + (oy0 + r) * g.ow;
      for (int64_t ox = 0; ox < g.ow; ox += lanes) {
        V m = vninf;
        for (int64_t kx = 0; kx < g.kw; ++kx) m = hn::Max(m, hn::LoadU(d, src + tap[kx] + ox));
        m = hn::Min(hn::Max(m, vlo), vhi);
        if (ox + lanes <= g.ow) {
          hn::StoreU(m, d, dst + ox);
        } else {
          hn::BlendedStore(m, hn::FirstN(d, static_cast<size_t>(g.ow - ox)), d, dst + ox);
        }
      }
    }
  }
}

// 3x3 windows at stride 2, the max pool of every zoo network, straight from the input rows with no
// row buffer. Max is idempotent, so a window clipped by padding or ceil_mode repeats one of its
// rows or columns instead of reading -inf. A vector block of n outputs starting at column x0
// needs the column maxes v[x0 .. x0 + 2n]: two loads give v[x0 ..) and two more v[x0 + 1 ..);
// their even and odd lanes are the window's three taps, and nothing is stored in between (the
// generic kernel's stores and reloads had cost ~3x the loads of this one).
#if HWY_TARGET != HWY_SCALAR  // no ConcatEven/ConcatOdd there; the scalar loop below does it all
template <class D>
HWY_ATTR void MaxPool3x3S2Row(D d, const float* r0, const float* r1, const float* r2,
                              const ConvGeometry& g, int64_t ox_lo, int64_t ox_hi, float lo,
                              float hi, float* dst) {
  using V = hn::Vec<D>;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  const V vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  auto column_max = [&](int64_t x) {
    return hn::Max(hn::Max(hn::LoadU(d, r0 + x), hn::LoadU(d, r1 + x)), hn::LoadU(d, r2 + x));
  };
  auto block = [&](int64_t ox0) {
    const int64_t x0 = 2 * ox0 - g.pl;
    const V a = column_max(x0), b = column_max(x0 + n);
    const V c = column_max(x0 + 1), e = column_max(x0 + 1 + n);
    const V m =
        hn::Max(hn::Max(hn::ConcatEven(d, b, a), hn::ConcatOdd(d, b, a)), hn::ConcatOdd(d, e, c));
    hn::StoreU(hn::Min(hn::Max(m, vlo), vhi), d, dst + ox0);
  };
  int64_t ox = ox_lo;
  for (; ox + n <= ox_hi; ox += n) block(ox);
  if (ox < ox_hi) block(ox_hi - n);  // overlaps the previous block; same values again
}

// Outputs [ox_lo, ox_hi) of one row in the widest vectors that fit them; returns the end of what
// it wrote (ox_lo when the row is narrower than 4 lanes).
HWY_ATTR int64_t MaxPool3x3S2Vectors(const float* r0, const float* r1, const float* r2,
                                     const ConvGeometry& g, int64_t ox_lo, int64_t ox_hi, float lo,
                                     float hi, float* dst) {
  const hn::ScalableTag<float> full;
  const hn::CappedTag<float, 8> eight;
  const hn::CappedTag<float, 4> four;
  const int64_t inner = ox_hi - ox_lo;
  if (inner >= static_cast<int64_t>(hn::Lanes(full))) {
    MaxPool3x3S2Row(full, r0, r1, r2, g, ox_lo, ox_hi, lo, hi, dst);
  } else if (inner >= 8 && hn::Lanes(eight) == 8) {
    MaxPool3x3S2Row(eight, r0, r1, r2, g, ox_lo, ox_hi, lo, hi, dst);
  } else if (inner >= 4 && hn::Lanes(four) == 4) {
    MaxPool3x3S2Row(four, r0, r1, r2, g, ox_lo, ox_hi, lo, hi, dst);
  } else {
    return ox_lo;
  }
  return ox_hi;
}
#endif

// Planes [c0, c1) of a 3x3 stride-2 pool (MaxPool3x3S2Row). Outputs whose window leaves the row
// (at most one at each end) are done in scalars; the rest in the widest vectors that fit them.
// Plane c is read from x + c * x_plane and written to y + c * y_plane.
HWY_ATTR void MaxPool3x3S2Planes(const float* x, int64_t x_plane, const ConvGeometry* geom,
                                 float lo, float hi, float* y, int64_t y_plane, int64_t c0,
                                 int64_t c1) {
  const ConvGeometry& g = *geom;
  // Outputs [ox_lo, ox_hi) have their whole window inside the row: 2 ox - pl >= 0 and
  // 2 ox - pl + 2 <= w - 1.
  const int64_t ox_lo = std::min(g.ow, (g.pl + 1) / 2);
  [[maybe_unused]] const int64_t ox_hi =
      g.w + g.pl >= 3 ? std::min(g.ow, (g.w + g.pl - 3) / 2 + 1) : 0;
  for (int64_t c = c0; c < c1; ++c) {
    const float* plane = x + c * x_plane;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      const int64_t ya = std::max<int64_t>(0, oy * g.sh - g.pt);
      const int64_t yb = std::min(g.h, oy * g.sh - g.pt + 3) - 1;
      const float* r0 = plane + ya * g.w;
      const float* r1 = plane + std::min(ya + 1, yb) * g.w;
      const float* r2 = plane + yb * g.w;
      float* dst = y + c * y_plane + oy * g.ow;
      int64_t done_hi = ox_lo;  // outputs [ox_lo, done_hi) are written by vectors
#if HWY_TARGET != HWY_SCALAR
      done_hi = MaxPool3x3S2Vectors(r0, r1, r2, g, ox_lo, std::max(ox_lo, ox_hi), lo, hi, dst);
#endif
      auto scalar = [&](int64_t ox) {
        const int64_t xa = std::max<int64_t>(0, 2 * ox - g.pl);
        const int64_t xb = std::min(g.w, 2 * ox - g.pl + 3);
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t ix = xa; ix < xb; ++ix) m = std::max({m, r0[ix], r1[ix], r2[ix]});
        dst[ox] = std::min(std::max(m, lo), hi);
      };
      for (int64_t ox = 0; ox < ox_lo; ++ox) scalar(ox);
      for (int64_t ox = done_hi; ox < g.ow; ++ox) scalar(ox);
    }
  }
}

// Planes [c0, c1). Only the rows' ends need -inf: the vertical pass writes [pl, pl + w) of every
// row before it is read, and the phases are written whole. So they are set once per block of
// planes (filling per plane had cost more than pooling the 13x13 planes of squeezenet's last
// pool).
HWY_ATTR void MaxPoolPlanes(const float* x, const ConvGeometry* g, float lo, float hi, float* y,
                            int64_t c0, int64_t c1, float* scratch) {
  const int64_t rf = MaxPoolRowFloats(g);
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < kPoolRows; ++r) {
    float* row = scratch + 3 * r * rf;
    std::fill(row, row + g->pl, ninf);
    std::fill(row + g->pl + g->w, row + rf, ninf);
  }
  for (int64_t c = c0; c < c1; ++c) {
    MaxPoolPlane(x + c * g->h * g->w, g, lo, hi, y + c * g->oh * g->ow, scratch);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace tessera::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <vector>

namespace tessera::cpu {

HWY_EXPORT(MaxPoolScratchFloats);
HWY_EXPORT(MaxPoolPlanes);
HWY_EXPORT(MaxPool3x3S2Planes);

bool max_pool_3x3s2_applies(const ConvGeometry& g) {
  // Every window keeps at least one input row and column (so a clipped one can repeat them).
  const bool some_input = g.oh > 0 && g.ow > 0 && g.pt >= 0 && g.pl >= 0 && g.pt < 3 && g.pl < 3 &&
                          (g.oh - 1) * g.sh - g.pt < g.h && (g.ow - 1) * g.sw - g.pl < g.w;
  return g.kh == 3 && g.kw == 3 && g.sw == 2 && g.sh >= 1 && some_input;
}

void max_pool_3x3s2_planes(const float* x, int64_t x_plane, const ConvGeometry& g, float lo,
                           float hi, float* y, int64_t y_plane, int64_t c0, int64_t c1) {
  HWY_DYNAMIC_DISPATCH(MaxPool3x3S2Planes)(x, x_plane, &g, lo, hi, y, y_plane, c0, c1);
}

bool max_pool(const float* x, const ConvGeometry& g, float lo, float hi, float* y) {
  if (!(g.sw == 1 || g.sw == 2) || g.oh <= 0 || g.ow <= 0 || g.kh <= 0 || g.kw <= 0 ||
      g.kw > kMaxPoolWidth) {
    return false;
  }
  const int64_t grain = std::max<int64_t>(1, 4096 / (g.oh * g.ow));
  if (max_pool_3x3s2_applies(g)) {
    tbb::parallel_for(
        tbb::blocked_range<int64_t>(0, g.c, grain), [&](const tbb::blocked_range<int64_t>& r) {
          max_pool_3x3s2_planes(x, g.h * g.w, g, lo, hi, y, g.oh * g.ow, r.begin(), r.end());
        });
    return true;
  }
  const int64_t floats = HWY_DYNAMIC_DISPATCH(MaxPoolScratchFloats)(&g);
  tbb::parallel_for(
      tbb::blocked_range<int64_t>(0, g.c, grain), [&](const tbb::blocked_range<int64_t>& r) {
        HWY_DYNAMIC_DISPATCH(MaxPoolPlanes)
        (x, &g, lo, hi, y, r.begin(), r.end(), thread_scratch<struct MaxPoolScratch>(floats));
      });
  return true;
}

}  // namespace tessera::cpu
#endif  // HWY_ONCE
