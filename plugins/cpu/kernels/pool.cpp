// 2-D max and average pooling over NCHW planes, one source for both (Max or Sum, then the
// average's scale), parallel over blocks of planes.
//
// Windows 2 or 3 wide at horizontal stride 2 run direct from the input rows: the column sums or
// maxes of the window's rows, loaded twice per block, give every tap as their even or odd lanes,
// and nothing is stored in between. 3x3 max pools (every zoo network's stride-2 pool) on
// MaxPool3x3S2Row, the rest (densenet's 2x2 average pools, googlenet's 2x2 max pool) on
// PoolS2Row. Same-shaped stride-1 pools on small planes (googlenet's 3x3 pad-1 ones) run
// over the flattened plane (PoolSamePlanes): vertical taps at constant offsets, horizontal taps
// masked at the row edges. Everything else runs separably (PoolRowsPlane): per output row, the
// vertical reduction of its window's rows into a row buffer whose ends hold the identity (the
// padding), then the horizontal reduction from that buffer, stride 2 from its even and odd
// columns.
//
// Vectors are picked per row length (16, 8, 4 or 1 lanes) and a row's last vector overlaps the one
// before, so 7- and 14-wide rows never go scalar. Average pools multiply by 1 / count from two
// tables (a window's count is a row count times a column count), so nothing is divided per output.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/pool.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/partial_vectors-inl.h"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "kernels/kernels.hpp"

#ifndef TESSERA_CPU_POOL_ROWS
#define TESSERA_CPU_POOL_ROWS
namespace tessera::cpu {
// Most window rows the direct stride-2 kernel takes; taller windows run separably.
constexpr int64_t kPoolDirectRows = 16;
// Output rows the separable kernel prepares together: their vertical reductions (and phases) are
// all stored before any is read back, so the horizontal pass's unaligned loads do not wait on
// stores still in flight (store-forwarding stalls had cost ~3x).
constexpr int64_t kPoolRows = 8;
}  // namespace tessera::cpu
#endif

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

struct MaxOp {
  static constexpr bool kScaled = false;  // no 1 / count after the reduction
  static float Identity() { return -std::numeric_limits<float>::infinity(); }
  static float Apply(float a, float b) { return std::max(a, b); }
  template <class V>
  static HWY_INLINE V Apply(V a, V b) {
    return hn::Max(a, b);
  }
};

struct SumOp {
  static constexpr bool kScaled = true;
  static float Identity() { return 0.0f; }
  static float Apply(float a, float b) { return a + b; }
  template <class V>
  static HWY_INLINE V Apply(V a, V b) {
    return hn::Add(a, b);
  }
};

// Calls block(i) for i = 0, lanes, 2 lanes, ... and a last block ending at n (overlapping, same
// values again); n >= lanes. One call site, so the block is inlined into the loop (called from
// two, the compiler had kept it a function: 2.5x the time of the direct 3x3 stride-2 pool).
template <class Fn>
HWY_INLINE void OverlappedBlocks(int64_t n, int64_t lanes, const Fn& block) {
  for (int64_t i = 0;; i += lanes) {
    const int64_t at = std::min(i, n - lanes);
    block(at);
    if (at + lanes >= n) break;
  }
}

// Scales a block of average outputs [ox, ox + lanes) of a row (max pools have no scale), clamps it
// and stores it.
template <class Op, class D>
HWY_INLINE void FinishBlock(D d, hn::Vec<D> m, const float* col_scale, int64_t ox, float row_scale,
                            float lo, float hi, float* dst) {
  if (Op::kScaled) m = hn::Mul(m, hn::Mul(hn::Set(d, row_scale), hn::LoadU(d, col_scale + ox)));
  hn::StoreU(hn::Min(hn::Max(m, hn::Set(d, lo)), hn::Set(d, hi)), d, dst);
}

// ---- Direct stride-2 kernel, windows 2 or 3 wide ----

#if HWY_TARGET != HWY_SCALAR  // no ConcatEven/ConcatOdd there; the separable kernel runs instead
// Outputs [ox_lo, ox_hi) of one row, all of whose windows lie inside the row, from the nr input
// rows of the window that exist. A block of n outputs from column x0 needs the column reductions
// v[x0 .. x0 + 2n]: v[x0 ..) from two loads per row, v[x0 + 1 ..) from two more (3 wide only);
// their even and odd lanes are the window's taps. NR in 1..3 takes the rows as r0..r2 (passed in
// registers: read from an array they had cost a quarter more), NR = 0 any count from `rows`.
template <class Op, int KW, int NR, class D>
HWY_INLINE void PoolS2Row(D d, const float* r0, const float* r1, const float* r2,
                          const float* const* rows, int64_t nr, int64_t pl, int64_t ox_lo,
                          int64_t ox_hi, const float* col_scale, float row_scale, float lo,
                          float hi, float* dst) {
  using V = hn::Vec<D>;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  auto column = [&](int64_t x) {
    if (NR == 0) {
      V m = hn::LoadU(d, rows[0] + x);
      for (int64_t r = 1; r < nr; ++r) m = Op::Apply(m, hn::LoadU(d, rows[r] + x));
      return m;
    }
    V m = hn::LoadU(d, r0 + x);
    if (NR >= 2) m = Op::Apply(m, hn::LoadU(d, r1 + x));
    if (NR >= 3) m = Op::Apply(m, hn::LoadU(d, r2 + x));
    return m;
  };
  OverlappedBlocks(ox_hi - ox_lo, n, [&](int64_t i) {
    const int64_t ox = ox_lo + i, x0 = 2 * ox - pl;
    const V a = column(x0), b = column(x0 + n);
    V m = Op::Apply(hn::ConcatEven(d, b, a), hn::ConcatOdd(d, b, a));
    if (KW == 3) m = Op::Apply(m, hn::ConcatOdd(d, column(x0 + 1 + n), column(x0 + 1)));
    FinishBlock<Op>(d, m, col_scale, ox, row_scale, lo, hi, dst + ox);
  });
}

// Planes [c0, c1) with the window's width (KW) and the vector (D, for the outputs [ox_lo, ox_hi)
// whose windows lie inside the row; none when `vectors` is false) fixed at compile time.
// Outputs whose window leaves the row (at most one at each end) are done in scalars.
template <class Op, int KW, class D>
HWY_NOINLINE void PoolS2PlanesWith(D d, bool vectors, const float* x, int64_t x_plane,
                                   const PoolWindow& p, int64_t ox_lo, int64_t ox_hi, float lo,
                                   float hi, float* y, int64_t y_plane, int64_t c0, int64_t c1) {
  const ConvGeometry& g = p.g;
  const float* col_scale = p.average ? p.col_scale.data() : nullptr;
  const float* rows[kPoolDirectRows];
  for (int64_t c = c0; c < c1; ++c) {
    const float* plane = x + c * x_plane;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      const int64_t ya = std::max<int64_t>(0, oy * g.sh - g.pt);
      const int64_t nr = std::max<int64_t>(0, std::min(g.h, oy * g.sh - g.pt + g.kh) - ya);
      for (int64_t r = 0; r < nr; ++r) rows[r] = plane + (ya + r) * g.w;
      const float row_scale = p.average ? p.row_scale[static_cast<size_t>(oy)] : 1.0f;
      float* dst = y + c * y_plane + oy * g.ow;
      if (vectors && nr > 0) {
        const float* r0 = rows[0];
        const float* r1 = rows[std::min<int64_t>(1, nr - 1)];
        const float* r2 = rows[std::min<int64_t>(2, nr - 1)];
        if (nr == 3) {
          PoolS2Row<Op, KW, 3>(d, r0, r1, r2, rows, nr, g.pl, ox_lo, ox_hi, col_scale, row_scale,
                               lo, hi, dst);
        } else if (nr == 2) {
          PoolS2Row<Op, KW, 2>(d, r0, r1, r2, rows, nr, g.pl, ox_lo, ox_hi, col_scale, row_scale,
                               lo, hi, dst);
        } else if (nr == 1) {
          PoolS2Row<Op, KW, 1>(d, r0, r1, r2, rows, nr, g.pl, ox_lo, ox_hi, col_scale, row_scale,
                               lo, hi, dst);
        } else {
          PoolS2Row<Op, KW, 0>(d, r0, r1, r2, rows, nr, g.pl, ox_lo, ox_hi, col_scale, row_scale,
                               lo, hi, dst);
        }
      }
      auto scalar = [&](int64_t ox) {
        const int64_t xa = std::max<int64_t>(0, 2 * ox - g.pl);
        const int64_t xb = std::min(g.w, 2 * ox - g.pl + KW);
        float m = Op::Identity();
        for (int64_t r = 0; r < nr; ++r) {
          for (int64_t ix = xa; ix < xb; ++ix) m = Op::Apply(m, rows[r][ix]);
        }
        if (Op::kScaled) m *= row_scale * col_scale[ox];
        dst[ox] = std::min(std::max(m, lo), hi);
      };
      for (int64_t ox = 0; ox < ox_lo; ++ox) scalar(ox);
      for (int64_t ox = vectors ? ox_hi : ox_lo; ox < g.ow; ++ox) scalar(ox);
    }
  }
}

// Planes [c0, c1) of a pool the direct kernel takes (pool2d_direct_applies), in the widest
// vectors that fit the outputs whose windows lie inside the row (none for fewer than 4).
template <class Op>
HWY_ATTR void PoolS2Planes(const float* x, int64_t x_plane, const PoolWindow& p, float lo, float hi,
                           float* y, int64_t y_plane, int64_t c0, int64_t c1) {
  const ConvGeometry& g = p.g;
  // Outputs [ox_lo, ox_hi) have their whole window inside the row: 2 ox - pl >= 0 and
  // 2 ox - pl + kw <= w.
  const int64_t ox_lo = std::min(g.ow, (g.pl + 1) / 2);
  const int64_t ox_hi =
      std::max(ox_lo, g.w + g.pl >= g.kw ? std::min(g.ow, (g.w + g.pl - g.kw) / 2 + 1) : 0);
  const int64_t inner = ox_hi - ox_lo;
  auto run = [&](auto d, bool vectors) {
    if (g.kw == 3) {
      PoolS2PlanesWith<Op, 3>(d, vectors, x, x_plane, p, ox_lo, ox_hi, lo, hi, y, y_plane, c0, c1);
    } else {
      PoolS2PlanesWith<Op, 2>(d, vectors, x, x_plane, p, ox_lo, ox_hi, lo, hi, y, y_plane, c0, c1);
    }
  };
  if (!ForWidestFit<4>(inner, [&](auto d) { run(d, true); })) {
    run(hn::CappedTag<float, 4>(), false);
  }
}
#endif

// 3x3 max pools at stride 2 (every zoo network's, and the conv+pool fusion's) on a kernel of their
// own: through PoolS2Row (rows from an array, any count, the scale) they measured 1.3-1.5x this
// one's time, for reasons the generated loops do not show. Straight from the input rows with no
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
  const bool vectors = ForWidestFit<4>(ox_hi - ox_lo, [&](auto d) HWY_ATTR {
    MaxPool3x3S2Row(d, r0, r1, r2, g, ox_lo, ox_hi, lo, hi, dst);
  });
  return vectors ? ox_hi : ox_lo;
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

// ---- Same-shaped stride-1 kernel over flattened planes ----

// Floats of a thread's scratch: the plane's vertical reductions with kw floats of margin on each
// side (edge taps read them, then are masked), each position's column index, and its scale.
HWY_ATTR int64_t PoolSameScratchFloats(const ConvGeometry& g) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  const int64_t n = g.h * g.w, margin = (g.kw + lanes) / lanes * lanes;
  return n + 2 * margin + 2 * n;
}

// Stride 1 with the output as large as the input (googlenet's 3x3 pad-1 pools) on planes small
// enough that per-row loops and 7- or 14-wide vectors would dominate: with the plane flattened
// to j = y * w + x, the vertical reduction of interior rows is one run of whole vectors over
// taps j + (ky - pt) w (the pt top and bottom rows, whose windows are clipped, go row by row), and
// the horizontal one is one run over taps j + kx - pl, each tap masked where it would cross into
// the neighbouring row. Planes [c0, c1).
template <class Op>
HWY_ATTR void PoolSamePlanes(const float* x, int64_t x_plane, const PoolWindow& p, float lo,
                             float hi, float* y, int64_t y_plane, int64_t c0, int64_t c1,
                             float* scratch) {
  const ConvGeometry& g = p.g;
  const hn::ScalableTag<float> df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const int64_t n = g.h * g.w, margin = (g.kw + lanes) / lanes * lanes;
  float* vert = scratch + margin;
  float* column = scratch + n + 2 * margin;
  float* scale = column + n;
  for (int64_t oy = 0; oy < g.h; ++oy) {
    for (int64_t ox = 0; ox < g.w; ++ox) {
      column[oy * g.w + ox] = static_cast<float>(ox);
      scale[oy * g.w + ox] =
          p.average ? p.row_scale[static_cast<size_t>(oy)] * p.col_scale[static_cast<size_t>(ox)]
                    : 1.0f;
    }
  }
  const int64_t pb = g.kh - 1 - g.pt;  // bottom rows with clipped windows
  // Vertical reduction of output rows [oy0, oy1) (one flat run) from input rows oy - pt + ky,
  // ky in [ky0, ky1).
  auto vertical = [&](const float* plane, int64_t oy0, int64_t oy1, int64_t ky0, int64_t ky1) {
    const int64_t len = (oy1 - oy0) * g.w;
    ForWidestFit<1>(len, [&](auto d) {
      OverlappedBlocks(len, static_cast<int64_t>(hn::Lanes(d)), [&](int64_t i) {
        const int64_t j = oy0 * g.w + i;
        const float* src = plane + j + (ky0 - g.pt) * g.w;
        auto m = hn::LoadU(d, src);
        for (int64_t ky = ky0 + 1; ky < ky1; ++ky)
          m = Op::Apply(m, hn::LoadU(d, src + (ky - ky0) * g.w));
        hn::StoreU(m, d, vert + j);
      });
    });
  };
  for (int64_t c = c0; c < c1; ++c) {
    const float* plane = x + c * x_plane;
    float* out = y + c * y_plane;
    for (int64_t oy = 0; oy < std::min(g.pt, g.h); ++oy) {
      vertical(plane, oy, oy + 1, g.pt - oy, std::min(g.kh, g.h + g.pt - oy));
    }
    if (g.h - pb > g.pt) vertical(plane, g.pt, g.h - pb, 0, g.kh);
    for (int64_t oy = std::max(g.pt, g.h - pb); oy < g.h; ++oy) {
      vertical(plane, oy, oy + 1, std::max<int64_t>(0, g.pt - oy), g.h + g.pt - oy);
    }
    ForWidestFit<1>(n, [&](auto d) {
      using V = hn::Vec<decltype(d)>;
      const V id = hn::Set(d, Op::Identity());
      OverlappedBlocks(n, static_cast<int64_t>(hn::Lanes(d)), [&](int64_t j) {
        const V col = hn::LoadU(d, column + j);
        V m = hn::LoadU(d, vert + j);
        for (int64_t kx = 0; kx < g.kw; ++kx) {
          const int64_t dx = kx - g.pl;
          if (dx == 0) continue;
          // Tap column ox + dx exists where ox >= -dx (left taps) or ox < w - dx (right taps).
          const auto inside = dx < 0 ? hn::Ge(col, hn::Set(d, static_cast<float>(-dx)))
                                     : hn::Lt(col, hn::Set(d, static_cast<float>(g.w - dx)));
          m = Op::Apply(m, hn::IfThenElse(inside, hn::LoadU(d, vert + j + dx), id));
        }
        if (Op::kScaled) m = hn::Mul(m, hn::LoadU(d, scale + j));
        hn::StoreU(hn::Min(hn::Max(m, hn::Set(d, lo)), hn::Set(d, hi)), d, out + j);
      });
    });
  }
}

// ---- Separable kernel, any window and stride ----

// Floats of one prepared row's buffer in padded coordinates: [0, pl) and [pl + w, end) hold the
// identity, output ox reads [ox sw, ox sw + kw). Stride 2 also de-interleaves whole vectors of
// pairs, up to column ow + kw / 2 of each phase.
HWY_ATTR int64_t PoolRowFloats(const ConvGeometry& g) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  const int64_t pairs = (g.ow + g.kw / 2 + lanes - 1) / lanes * lanes;
  const int64_t need = std::max({g.pl + g.w, g.ow * g.sw + g.kw, 2 * pairs});
  return (need + lanes - 1) / lanes * lanes + lanes;
}

// A thread's scratch: kPoolRows slots of 3 row buffers each (the row, its even and odd columns).
HWY_ATTR int64_t PoolRowsScratchFloats(const ConvGeometry& g) {
  return 3 * kPoolRows * PoolRowFloats(g);
}

// One plane. The identity ends of every row buffer are already set (PoolRowsPlanes).
template <class Op>
HWY_ATTR void PoolRowsPlane(const float* plane, const PoolWindow& p, float lo, float hi, float* out,
                            float* scratch) {
  const ConvGeometry& g = p.g;
  const int64_t rf = PoolRowFloats(g);
  auto row_of = [&](int64_t r) { return scratch + 3 * r * rf; };
  const float* col_scale = p.average ? p.col_scale.data() : nullptr;
  for (int64_t oy0 = 0; oy0 < g.oh; oy0 += kPoolRows) {
    const int64_t rows = std::min(kPoolRows, g.oh - oy0);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t oy = oy0 + r;
      const int64_t ya = std::max<int64_t>(0, oy * g.sh - g.pt);
      const int64_t yb = std::min(g.h, oy * g.sh - g.pt + g.kh);
      float* cols = row_of(r) + g.pl;
      ForWidestFit<1>(g.w, [&](auto d) {
        using V = hn::Vec<decltype(d)>;
        const V id = hn::Set(d, Op::Identity());
        OverlappedBlocks(g.w, static_cast<int64_t>(hn::Lanes(d)), [&](int64_t x) {
          V m = id;
          for (int64_t iy = ya; iy < yb; ++iy) m = Op::Apply(m, hn::LoadU(d, plane + iy * g.w + x));
          hn::StoreU(m, d, cols + x);
        });
      });
    }
    // Stride 2 reads even and odd columns: de-interleaved after all the block's vertical passes,
    // so a row's stores are no longer in flight when they are loaded.
    if (g.sw == 2) {
      const hn::ScalableTag<float> d;
      const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
      const int64_t pairs = (g.ow + g.kw / 2 + lanes - 1) / lanes * lanes;
      for (int64_t r = 0; r < rows; ++r) {
        const float* row = row_of(r);
        float* even = row_of(r) + rf;
        float* odd = even + rf;
        for (int64_t i = 0; i < pairs; i += lanes) {
          hn::Vec<decltype(d)> e, o;
          hn::LoadInterleaved2(d, row + 2 * i, e, o);
          hn::StoreU(e, d, even + i);
          hn::StoreU(o, d, odd + i);
        }
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = row_of(r);
      const float row_scale = p.average ? p.row_scale[static_cast<size_t>(oy0 + r)] : 1.0f;
      float* dst = out + (oy0 + r) * g.ow;
      if (g.sw > 2) {
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          float m = Op::Identity();
          for (int64_t kx = 0; kx < g.kw; ++kx) m = Op::Apply(m, row[ox * g.sw + kx]);
          if (Op::kScaled) m *= row_scale * col_scale[ox];
          dst[ox] = std::min(std::max(m, lo), hi);
        }
        continue;
      }
      // Output ox, tap kx reads column ox + kx of the row, or at stride 2 column ox + kx / 2 of
      // phase kx & 1.
      auto tap = [&](int64_t kx) { return g.sw == 1 ? kx : (1 + (kx & 1)) * rf + kx / 2; };
      ForWidestFit<1>(g.ow, [&](auto d) {
        using V = hn::Vec<decltype(d)>;
        OverlappedBlocks(g.ow, static_cast<int64_t>(hn::Lanes(d)), [&](int64_t ox) {
          V m = hn::LoadU(d, row + tap(0) + ox);
          for (int64_t kx = 1; kx < g.kw; ++kx) m = Op::Apply(m, hn::LoadU(d, row + tap(kx) + ox));
          FinishBlock<Op>(d, m, col_scale, ox, row_scale, lo, hi, dst + ox);
        });
      });
    }
  }
}

// Planes [c0, c1). Only the row buffers' ends need the identity: the vertical pass writes
// [pl, pl + w) of every row before it is read, and the phases are written whole. So they are set
// once per block of planes (filling per plane had cost more than pooling a 13x13 plane).
template <class Op>
HWY_ATTR void PoolRowsPlanes(const float* x, int64_t x_plane, const PoolWindow& p, float lo,
                             float hi, float* y, int64_t y_plane, int64_t c0, int64_t c1,
                             float* scratch) {
  const ConvGeometry& g = p.g;
  const int64_t rf = PoolRowFloats(g);
  for (int64_t r = 0; r < kPoolRows; ++r) {
    float* row = scratch + 3 * r * rf;
    std::fill(row, row + g.pl, Op::Identity());
    std::fill(row + g.pl + g.w, row + rf, Op::Identity());
  }
  for (int64_t c = c0; c < c1; ++c)
    PoolRowsPlane<Op>(x + c * x_plane, p, lo, hi, y + c * y_plane, scratch);
}

template <class Op>
HWY_ATTR void PoolPlanesOf(const float* x, int64_t x_plane, const PoolWindow& p, float lo, float hi,
                           float* y, int64_t y_plane, int64_t c0, int64_t c1) {
  if (std::is_same<Op, MaxOp>::value && max_pool_3x3s2_applies(p.g)) {
    MaxPool3x3S2Planes(x, x_plane, &p.g, lo, hi, y, y_plane, c0, c1);
    return;
  }
#if HWY_TARGET != HWY_SCALAR
  if (pool2d_direct_applies(p.g)) {
    PoolS2Planes<Op>(x, x_plane, p, lo, hi, y, y_plane, c0, c1);
    return;
  }
#endif
  if (pool2d_same_applies(p.g)) {
    float* scratch = thread_scratch<struct PoolSameScratch>(PoolSameScratchFloats(p.g));
    PoolSamePlanes<Op>(x, x_plane, p, lo, hi, y, y_plane, c0, c1, scratch);
    return;
  }
  float* scratch = thread_scratch<struct PoolRowsScratch>(PoolRowsScratchFloats(p.g));
  PoolRowsPlanes<Op>(x, x_plane, p, lo, hi, y, y_plane, c0, c1, scratch);
}

HWY_ATTR void PoolPlanes(const float* x, int64_t x_plane, const PoolWindow* p, float lo, float hi,
                         float* y, int64_t y_plane, int64_t c0, int64_t c1) {
  if (p->average) {
    PoolPlanesOf<SumOp>(x, x_plane, *p, lo, hi, y, y_plane, c0, c1);
  } else {
    PoolPlanesOf<MaxOp>(x, x_plane, *p, lo, hi, y, y_plane, c0, c1);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace tessera::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace tessera::cpu {

HWY_EXPORT(PoolPlanes);

std::vector<float> pool_scales(int64_t outputs, int64_t size, int64_t k, int64_t stride,
                               int64_t pad, int64_t pad_end, bool count_include_pad) {
  std::vector<float> scale(static_cast<size_t>(outputs));
  for (int64_t o = 0; o < outputs; ++o) {
    const int64_t a = o * stride - pad, b = a + k;
    const int64_t count = count_include_pad ? std::min(b, size + pad_end) - a
                                            : std::min(b, size) - std::max<int64_t>(a, 0);
    scale[static_cast<size_t>(o)] = count > 0 ? 1.0f / static_cast<float>(count) : 0.0f;
  }
  return scale;
}

PoolWindow max_pool_window(const ConvGeometry& g) {
  PoolWindow p;
  p.g = g;
  return p;
}

PoolWindow average_pool_window(const ConvGeometry& g, bool count_include_pad, int64_t pad_bottom,
                               int64_t pad_right) {
  PoolWindow p;
  p.g = g;
  p.average = true;
  p.row_scale = pool_scales(g.oh, g.h, g.kh, g.sh, g.pt, pad_bottom, count_include_pad);
  p.col_scale = pool_scales(g.ow, g.w, g.kw, g.sw, g.pl, pad_right, count_include_pad);
  return p;
}

bool pool2d_direct_applies(const ConvGeometry& g) {
  return g.sw == 2 && (g.kw == 2 || g.kw == 3) && g.kh >= 1 && g.kh <= kPoolDirectRows &&
         g.sh >= 1 && g.pt >= 0 && g.pl >= 0;
}

bool pool2d_same_applies(const ConvGeometry& g) {
  // Rows of at most 16, narrower than a 16-lane vector; from 28 wide the separable kernel was
  // faster (googlenet's 28x28 pools, in the network).
  return g.sh == 1 && g.sw == 1 && g.oh == g.h && g.ow == g.w && g.pt >= 0 && g.pl >= 0 &&
         g.pt < g.kh && g.pl < g.kw && g.w <= 16 && g.h * g.w <= 4096;
}

bool max_pool_3x3s2_applies(const ConvGeometry& g) {
  // Every window keeps at least one input row and column.
  const bool some_input = g.oh > 0 && g.ow > 0 && g.pt >= 0 && g.pl >= 0 && g.pt < 3 && g.pl < 3 &&
                          (g.oh - 1) * g.sh - g.pt < g.h && (g.ow - 1) * g.sw - g.pl < g.w;
  return g.kh == 3 && g.kw == 3 && g.sw == 2 && g.sh >= 1 && some_input;
}

void pool2d_planes(const float* x, int64_t x_plane, const PoolWindow& p, float lo, float hi,
                   float* y, int64_t y_plane, int64_t c0, int64_t c1) {
  if (p.g.oh <= 0 || p.g.ow <= 0) return;
  HWY_DYNAMIC_DISPATCH(PoolPlanes)(x, x_plane, &p, lo, hi, y, y_plane, c0, c1);
}

void pool2d(const float* x, const PoolWindow& p, float lo, float hi, float* y) {
  const ConvGeometry& g = p.g;
  if (g.oh <= 0 || g.ow <= 0) return;
  // About 4K outputs per task, so a task of small planes (a 14x14 one has 196) pays for its
  // scheduling and the scratch's set-up once per several planes.
  const int64_t grain = std::max<int64_t>(1, 4096 / (g.oh * g.ow));
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, g.c, grain),
                    [&](const tbb::blocked_range<int64_t>& r) {
                      pool2d_planes(x, g.h * g.w, p, lo, hi, y, g.oh * g.ow, r.begin(), r.end());
                    });
}

}  // namespace tessera::cpu
#endif  // HWY_ONCE
