// Highway SIMD source for the cpu plugin: the SGEMM micro-kernel and the elementwise kernels.
// foreach_target.h re-includes this file once per enabled target; HWY_DYNAMIC_DISPATCH picks the
// best one for the running CPU on the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd.cpp"
#include <hwy/cache_control.h>
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/partial_vectors-inl.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "kernels/kernels.hpp"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A tile is NR floats wide whatever the vector width: AVX-512 uses NR / 16 vectors per row, AVX2
// NR / 8, NEON NR / 4. Scalable targets (SVE, RVV) use fixed 128-bit vectors so the count stays a
// compile-time constant and the accumulators stay in registers.
#if HWY_HAVE_SCALABLE
using DF = hn::FixedTag<float, 4>;
constexpr size_t kLanes = 4;
#else
constexpr size_t kLanes = HWY_LANES(float) > 16 ? 16 : HWY_LANES(float);
using DF = hn::CappedTag<float, kLanes>;
#endif
static_assert(static_cast<size_t>(kNR) % kLanes == 0, "kNR must be a multiple of lanes");

// How the micro-kernel walks B's k rows: a fixed stride (packed panels, row-major B read in place)
// or a table of offsets (B rows gathered from phase planes, see PhaseBlockT).
struct StridedRows {
  const float* p;
  int64_t ld;
  HWY_INLINE const float* get() const { return p; }
  HWY_INLINE void next() { p += ld; }
  HWY_INLINE StridedRows shifted(int64_t j) const { return StridedRows{p + j, ld}; }
};
struct OffsetRows {
  const float* base;
  const int64_t* off;
  HWY_INLINE const float* get() const { return base + *off; }
  HWY_INLINE void next() { ++off; }
  HWY_INLINE OffsetRows shifted(int64_t j) const { return OffsetRows{base + j, off}; }
};

// A tile's epilogue, pointers at the tile's origin: per-row and per-column bias, a residual laid
// out like C (row stride ldc) added before the clamp to [lo, hi] (a fused Add of resnet blocks),
// then the pointwise post op (nullptr for none).
struct TileEpilogue {
  const float* row_bias;
  const float* col_bias;
  const float* res;
  float lo, hi;
  const UnaryFn* post;
  HWY_INLINE TileEpilogue shifted(int64_t j) const {
    return TileEpilogue{
        row_bias, col_bias ? col_bias + j : nullptr, res ? res + j : nullptr, lo, hi, post};
  }
};

// The epilogue of the tile whose top-left element is C(i0, j0).
HWY_INLINE TileEpilogue TileAt(const Epilogue& e, int64_t i0, int64_t j0, int64_t ldc) {
  return TileEpilogue{e.row_bias ? e.row_bias + i0 : nullptr,
                      e.col_bias ? e.col_bias + j0 : nullptr,
                      e.residual ? e.residual + i0 * ldc + j0 : nullptr, e.lo, e.hi, e.post};
}

// A panel's k steps the micro-kernel prefetches ahead. Late layers' weights (resnet-50's 4 MiB
// 1x1 convs at 7x7) do not stay in cache between runs of a network: streamed from memory with
// only the hardware prefetchers, such a conv ran ~1.8x its time with warm caches.
constexpr int64_t kPrefetchSteps = 256;

// HWY_SCALAR runs only on x86 CPUs without SSE4 (and as one of the kernel tests' targets). With
// one lane per "vector", MicroTileT's unrolled accumulators become up to 12 x 32 scalars per
// instantiation: the target took 230 s of this file's 360 s compile for code nobody runs for
// speed. Its tiles (MicroTileT and ColumnTailT alike) are this one loop with run-time sizes:
// C (rows x cols of an mr-row panel) = A * B over k steps, C's old values added unless `first`,
// the epilogue applied if `last`.
constexpr bool kScalarTiles = HWY_TARGET == HWY_SCALAR;
constexpr int64_t kMaxTileFloats = 12 * 32;

template <class Rows>
HWY_NOINLINE void ScalarTile(const float* ap, Rows brows, int64_t k, int64_t mr, float* c,
                             int64_t ldc, int64_t rows, int64_t cols, const TileEpilogue& ep,
                             bool first, bool last) {
  float acc[kMaxTileFloats];
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; ++j) acc[r * cols + j] = first ? 0.0f : c[r * ldc + j];
  }
  for (int64_t p = 0; p < k; ++p, ap += mr, brows.next()) {
    const float* bp = brows.get();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < cols; ++j) acc[r * cols + j] += ap[r] * bp[j];
    }
  }
  if (!last) {
    for (int64_t r = 0; r < rows; ++r) std::copy_n(acc + r * cols, cols, c + r * ldc);
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; ++j) {
      float x = acc[r * cols + j];
      if (ep.row_bias) x += ep.row_bias[r];
      if (ep.col_bias) x += ep.col_bias[j];
      if (ep.res) x += ep.res[r * ldc + j];
      x = std::min(std::max(x, ep.lo), ep.hi);
      if (ep.post != nullptr) {
        acc[r * cols + j] = x;
      } else {
        c[r * ldc + j] = x;
      }
    }
  }
  if (ep.post != nullptr) unary_block(*ep.post, acc, cols, c, ldc, rows, cols);
}

// One MR x NR tile: acc = Apanel * Bpanel over k steps, then bias, clamp, store. Edge tiles
// (rows < MR or cols < NR) load and store only their rows and columns (LoadFirst, StoreFirst), so
// nothing past the end of C is touched. With K blocking, a tile is visited once per K chunk:
// kFirst starts from zero (else from C), kLast applies the epilogue (else C keeps the raw partial
// sum). Template flags and whole-tile loops (no early exits) keep the accumulators in registers:
// runtime flags made the compiler spill them to the stack around the K loop, which cost most of
// the time at small K (1x1 convs).
// Per k step: NR / lanes loads of B, MR broadcasts of A (folded into the FMA as a memory operand
// on AVX-512), MR * NR / lanes independent FMAs.
template <int MR, int NR, bool kFirst, bool kLast, class Rows>
HWY_ATTR HWY_INLINE void MicroTileVectors(const float* HWY_RESTRICT ap, Rows brows, int64_t k,
                                          float* HWY_RESTRICT c, int64_t ldc, int64_t rows,
                                          int64_t cols, const TileEpilogue& ep) {
  constexpr size_t kVecs = static_cast<size_t>(NR) / kLanes;
  static_assert(kVecs * kLanes == static_cast<size_t>(NR), "NR must be a multiple of lanes");
  const DF d;
  using V = hn::Vec<DF>;
  V acc[MR][kVecs];
  const bool full = rows == MR && cols == NR;
  // Columns of vector v that exist (0 past the tile's columns).
  auto lanes_of = [cols](size_t v) {
    return std::max<int64_t>(0, cols - static_cast<int64_t>(v * kLanes));
  };
  if constexpr (kFirst) {
    for (size_t r = 0; r < static_cast<size_t>(MR); ++r) {
      for (size_t v = 0; v < kVecs; ++v) acc[r][v] = hn::Zero(d);
    }
  } else {
    for (size_t r = 0; r < static_cast<size_t>(MR); ++r) {
      const float* src = c + static_cast<int64_t>(r) * ldc;
      for (size_t v = 0; v < kVecs; ++v) {
        if (full) {
          acc[r][v] = hn::LoadU(d, src + v * kLanes);
        } else {
          const bool row = static_cast<int64_t>(r) < rows && lanes_of(v) > 0;
          acc[r][v] = row ? LoadFirst(d, src + v * kLanes, lanes_of(v)) : hn::Zero(d);
        }
      }
    }
  }
  for (int64_t p = 0; p < k; ++p) {
    hwy::Prefetch(ap + kPrefetchSteps * MR);
    const float* HWY_RESTRICT bp = brows.get();
    V b[kVecs];
    for (size_t v = 0; v < kVecs; ++v) b[v] = hn::LoadU(d, bp + v * kLanes);
    for (size_t r = 0; r < static_cast<size_t>(MR); ++r) {
      const V a = hn::Set(d, ap[r]);
      for (size_t v = 0; v < kVecs; ++v) acc[r][v] = hn::MulAdd(a, b[v], acc[r][v]);
    }
    ap += MR;
    brows.next();
  }
  if (full) {
    // Whole tiles finish straight from the accumulators: when this path shared its code with the
    // edge tiles', the compiler kept acc on the stack through the epilogue, 32 extra memory ops
    // per 8x32 tile (~40% of the time at K = 16, Winograd's products of squeezenet).
    if constexpr (kLast) {
      const V vlo = hn::Set(d, ep.lo), vhi = hn::Set(d, ep.hi);
      V cb[kVecs];
      for (size_t v = 0; v < kVecs; ++v) {
        cb[v] = ep.col_bias ? hn::LoadU(d, ep.col_bias + v * kLanes) : hn::Zero(d);
      }
      // With a post op the tile goes through a contiguous buffer on the stack, from which the
      // post op writes C. C's rows (a conv's output planes) are a multiple of 4 KiB apart on
      // 64x64 and 128x128 maps: a tile stored to C and read back for the post op afterwards had
      // left L1 (set conflicts), and the post op's pass cost as much as the GEMM (efficientnet's
      // 1x1 16 -> 96 + SiLU at 112x112, fastvit's 48 -> 144 + GELU at 64x64).
      alignas(64) float tile[MR * NR];
      float* dst = ep.post != nullptr ? tile : c;
      const int64_t ld = ep.post != nullptr ? NR : ldc;
      for (size_t r = 0; r < static_cast<size_t>(MR); ++r) {
        const V rb = ep.row_bias ? hn::Set(d, ep.row_bias[r]) : hn::Zero(d);
        const float* res = ep.res ? ep.res + static_cast<int64_t>(r) * ldc : nullptr;
        float* out = dst + static_cast<int64_t>(r) * ld;
        for (size_t v = 0; v < kVecs; ++v) {
          V x = hn::Add(hn::Add(acc[r][v], rb), cb[v]);
          if (res) x = hn::Add(x, hn::LoadU(d, res + v * kLanes));
          hn::StoreU(hn::Min(hn::Max(x, vlo), vhi), d, out + v * kLanes);
        }
      }
      if (ep.post != nullptr) unary_block(*ep.post, tile, NR, c, ldc, MR, NR);
    } else {
      for (size_t r = 0; r < static_cast<size_t>(MR); ++r) {
        for (size_t v = 0; v < kVecs; ++v) {
          hn::StoreU(acc[r][v], d, c + static_cast<int64_t>(r) * ldc + v * kLanes);
        }
      }
    }
    return;
  }
  const V vlo = hn::Set(d, ep.lo), vhi = hn::Set(d, ep.hi);
  V cb[kVecs];
  for (size_t v = 0; v < kVecs; ++v) {
    cb[v] = kLast && ep.col_bias && lanes_of(v) > 0 ? LoadFirst(d, ep.col_bias + v * kLanes,
                                                                lanes_of(v))
                                                    : hn::Zero(d);
  }
  // The post op as in whole tiles: through a buffer, of which only the tile's rows and columns
  // are written and read.
  const bool post = kLast && ep.post != nullptr;
  alignas(64) float tile[MR * NR];
  float* dst = post ? tile : c;
  const int64_t ld = post ? NR : ldc;
  for (size_t r = 0; r < static_cast<size_t>(MR); ++r) {
    if (static_cast<int64_t>(r) >= rows) break;
    const V rb = hn::Set(d, kLast && ep.row_bias ? ep.row_bias[r] : 0.0f);
    const float* res = kLast && ep.res ? ep.res + static_cast<int64_t>(r) * ldc : nullptr;
    float* out = dst + static_cast<int64_t>(r) * ld;
    for (size_t v = 0; v < kVecs; ++v) {
      const int64_t n = lanes_of(v);
      if (n == 0) break;
      V x = acc[r][v];
      if constexpr (kLast) {
        x = hn::Add(hn::Add(x, rb), cb[v]);
        if (res) x = hn::Add(x, LoadFirst(d, res + v * kLanes, n));
        x = hn::Min(hn::Max(x, vlo), vhi);
      }
      StoreFirst(x, d, out + v * kLanes, n);
    }
  }
  if (post) unary_block(*ep.post, tile, NR, c, ldc, rows, cols);
}

// The tile on this target: MicroTileVectors, or ScalarTile on HWY_SCALAR.
template <int MR, int NR, bool kFirst, bool kLast, class Rows>
HWY_ATTR HWY_INLINE void MicroTileT(const float* HWY_RESTRICT ap, Rows brows, int64_t k,
                                    float* HWY_RESTRICT c, int64_t ldc, int64_t rows, int64_t cols,
                                    const TileEpilogue& ep) {
  static_assert(MR * NR <= kMaxTileFloats, "ScalarTile's accumulators hold the largest tile");
  if constexpr (kScalarTiles) {
    ScalarTile(ap, brows, k, MR, c, ldc, rows, cols, ep, kFirst, kLast);
  } else {
    MicroTileVectors<MR, NR, kFirst, kLast>(ap, brows, k, c, ldc, rows, cols, ep);
  }
}

// The last few columns of C (NC <= kTailCols) for MR rows: vectors run down the rows (A's packed
// k step is MR contiguous floats) and each column's B value is broadcast, so a 1-column remainder
// costs K x ceil(MR / lanes) narrow FMAs instead of a whole tile's MR x NR / lanes. A 7x7 output
// (49 columns) in 16- or 32-wide tiles computed 64 columns; resnet's 7x7 stage ran ~1.35x ORT.
// Two accumulators per vector (even and odd k) keep a one-column tail off the FMA latency.
constexpr int64_t kTailCols = kTailColumns;
constexpr size_t kTailLanes = kLanes > 8 ? 8 : kLanes;
#if HWY_HAVE_SCALABLE
using DT = hn::FixedTag<float, kTailLanes>;
#else
using DT = hn::CappedTag<float, kTailLanes>;
#endif

template <int MR, int NC, class Rows>
HWY_ATTR HWY_INLINE void ColumnTailT(const float* HWY_RESTRICT ap, Rows brows, int64_t k,
                                     float* HWY_RESTRICT c, int64_t ldc, int64_t rows,
                                     const TileEpilogue& ep, bool first, bool last) {
  constexpr size_t kChunks = (static_cast<size_t>(MR) + kTailLanes - 1) / kTailLanes;
  const DT d;
  using V = hn::Vec<DT>;
  alignas(64) float buf[kChunks * kTailLanes];
  // dst = src[r * stride] for the tile's rows, zero past them (and everywhere without src).
  auto rows_of = [&](float* dst, const float* src, int64_t stride) {
    std::fill(dst, dst + kChunks * kTailLanes, 0.0f);
    if (src != nullptr) {
      for (int64_t r = 0; r < rows; ++r) dst[r] = src[r * stride];
    }
  };
  V acc[2][NC][kChunks];
  for (size_t j = 0; j < static_cast<size_t>(NC); ++j) {
    if (!first) rows_of(buf, c + j, ldc);
    for (size_t h = 0; h < kChunks; ++h) {
      acc[0][j][h] = first ? hn::Zero(d) : hn::Load(d, buf + h * kTailLanes);
      acc[1][j][h] = hn::Zero(d);
    }
  }
  auto step = [&](size_t u) HWY_ATTR {
    const float* HWY_RESTRICT bp = brows.get();
    V a[kChunks];
    for (size_t h = 0; h < kChunks; ++h) {
      a[h] = hn::LoadU(d, ap + h * kTailLanes);  // past MR: the next k's rows, or pack_a's slack
    }
    for (size_t j = 0; j < static_cast<size_t>(NC); ++j) {
      const V b = hn::Set(d, bp[j]);
      for (size_t h = 0; h < kChunks; ++h) acc[u][j][h] = hn::MulAdd(a[h], b, acc[u][j][h]);
    }
    ap += MR;
    brows.next();
  };
  int64_t p = 0;
  for (; p + 2 <= k; p += 2) {
    step(0);
    step(1);
  }
  if (p < k) step(0);
  // Epilogue and store, a column at a time: buf holds the column's residual, then its result.
  alignas(64) float row_bias[kChunks * kTailLanes];
  if (last) rows_of(row_bias, ep.row_bias, 1);
  for (size_t j = 0; j < static_cast<size_t>(NC); ++j) {
    if (last && ep.res != nullptr) rows_of(buf, ep.res + j, ldc);
    for (size_t h = 0; h < kChunks; ++h) {
      V x = hn::Add(acc[0][j][h], acc[1][j][h]);
      if (last) {
        const V cb = hn::Set(d, ep.col_bias != nullptr ? ep.col_bias[j] : 0.0f);
        x = hn::Add(hn::Add(x, hn::Load(d, row_bias + h * kTailLanes)), cb);
        if (ep.res != nullptr) x = hn::Add(x, hn::Load(d, buf + h * kTailLanes));
        x = hn::Min(hn::Max(x, hn::Set(d, ep.lo)), hn::Set(d, ep.hi));
      }
      hn::Store(x, d, buf + h * kTailLanes);
    }
    for (int64_t r = 0; r < rows; ++r) c[r * ldc + static_cast<int64_t>(j)] = buf[r];
  }
  if (last && ep.post != nullptr) unary_rows(*ep.post, c, ldc, rows, NC);
}

template <int MR, class Rows>
HWY_ATTR HWY_INLINE void ColumnTail(const float* HWY_RESTRICT ap, Rows b, int64_t k,
                                    float* HWY_RESTRICT c, int64_t ldc, int64_t rows, int64_t cols,
                                    const TileEpilogue& ep, bool first, bool last) {
  // The switch in the else branch, so that the scalar target does not instantiate ColumnTailT.
  if constexpr (kScalarTiles) {
    ScalarTile(ap, b, k, MR, c, ldc, rows, cols, ep, first, last);
  } else {
    switch (cols) {
#define TESSERA_TAIL_CASE(NC) \
  case NC:                    \
    return ColumnTailT<MR, NC>(ap, b, k, c, ldc, rows, ep, first, last);
      TESSERA_TAIL_CASE(1)
      TESSERA_TAIL_CASE(2)
      TESSERA_TAIL_CASE(3)
      TESSERA_TAIL_CASE(4)
      TESSERA_TAIL_CASE(5)
      TESSERA_TAIL_CASE(6)
#undef TESSERA_TAIL_CASE
      default:
        return;
    }
  }
}

// MicroTileT with its K-chunk flags chosen at run time.
template <int MR, int NR, class Rows>
HWY_ATTR HWY_INLINE void MicroTileFlags(const float* HWY_RESTRICT ap, Rows b, int64_t k,
                                        float* HWY_RESTRICT c, int64_t ldc, int64_t rows,
                                        int64_t cols, const TileEpilogue& ep, bool first,
                                        bool last) {
  if (first && last) {
    MicroTileT<MR, NR, true, true>(ap, b, k, c, ldc, rows, cols, ep);
  } else if (first) {
    MicroTileT<MR, NR, true, false>(ap, b, k, c, ldc, rows, cols, ep);
  } else if (last) {
    MicroTileT<MR, NR, false, true>(ap, b, k, c, ldc, rows, cols, ep);
  } else {
    MicroTileT<MR, NR, false, false>(ap, b, k, c, ldc, rows, cols, ep);
  }
}

// The columns [0, cols) of an MR x NR tile, 0 < cols < NR, MR > 1: a 32-wide one is split into an
// edge tile of up to 16 columns and an edge tile of 16 for the rest; a rest of at most kTailCols
// columns runs as a column tail, anything wider as an edge tile of 16 (or NR) columns. Out of
// line, with one call site per tile kind: edge tiles are a row of tiles per block, and each
// inlined copy of the tile code cost the compile (every target, both Rows kinds) more than the
// call costs the run.
template <int MR, int NR, class Rows>
HWY_ATTR HWY_NOINLINE void EdgeTile(const float* HWY_RESTRICT ap, Rows b, int64_t k,
                                    float* HWY_RESTRICT c, int64_t ldc, int64_t rows, int64_t cols,
                                    const TileEpilogue& ep, bool first, bool last) {
  if constexpr (NR > 16 && 16 % kLanes == 0) {
    if (cols > kTailCols) {
      MicroTileFlags<MR, 16>(ap, b, k, c, ldc, rows, std::min<int64_t>(cols, 16), ep, first, last);
      if (cols > 16) {
        EdgeTile<MR, 16>(ap, b.shifted(16), k, c + 16, ldc, rows, cols - 16, ep.shifted(16), first,
                         last);
      }
      return;
    }
  }
  if (cols <= kTailCols) {
    return ColumnTail<MR>(ap, b, k, c, ldc, rows, cols, ep, first, last);
  }
  MicroTileFlags<MR, NR>(ap, b, k, c, ldc, rows, cols, ep, first, last);
}

// One MR x NR tile of C of which `cols` columns exist: whole-width tiles inline (the hot path),
// narrower ones through EdgeTile.
template <int MR, int NR, class Rows>
HWY_ATTR HWY_INLINE void AnyTile(const float* HWY_RESTRICT ap, Rows b, int64_t k,
                                 float* HWY_RESTRICT c, int64_t ldc, int64_t rows, int64_t cols,
                                 const TileEpilogue& ep, bool first, bool last) {
  if (cols >= NR || MR == 1) {
    return MicroTileFlags<MR, NR>(ap, b, k, c, ldc, rows, cols, ep, first, last);
  }
  EdgeTile<MR, NR>(ap, b, k, c, ldc, rows, cols, ep, first, last);
}

template <int MR, int NR>
HWY_ATTR HWY_INLINE void MicroTile(const float* HWY_RESTRICT ap, const float* HWY_RESTRICT bp,
                                   int64_t ldb, int64_t k, float* HWY_RESTRICT c, int64_t ldc,
                                   int64_t rows, int64_t cols, const TileEpilogue& ep, bool first,
                                   bool last) {
  AnyTile<MR, NR>(ap, StridedRows{bp, ldb}, k, c, ldc, rows, cols, ep, first, last);
}

// B panels [q0, q1) times row panels [p0, p1), K in chunks of kc so the B chunks stay in cache
// while A's row panels stream past. Panel q's element (k, c) is at bp[(q - q0) * qstride + k * ldb
// + c]: packed panels have ldb = NR, qstride = K * NR; an unpacked row-major B has ldb = its row
// stride and qstride = NR (then every panel must be a full NR wide).
// post_per_tile: the epilogue's post op runs per tile (MicroTileT), else in one pass over the
// block's rows after it. Per tile where C's rows are a whole output plane apart (a conv on a
// large map), which a pass after the block read back from L2 (see MicroTileT); one pass for a
// block of B packed whole (small maps), still in L1, where per tile measured slower (1x1 192 ->
// 1152 + SiLU at 7x7: 280 against 225 us, tiles of 32, 16 and 1 columns).
template <int MR, int NR>
HWY_ATTR void PanelBlockT(const PackedMatrix* a, const float* bp, int64_t ldb, int64_t qstride,
                          int64_t n, int64_t q0, int64_t q1, float* c, int64_t ldc,
                          const Epilogue* e, int64_t p0, int64_t p1, int64_t kc,
                          bool post_per_tile) {
  const int64_t m = a->rows, k = a->cols;
  Epilogue tile_epilogue = *e;
  if (!post_per_tile) tile_epilogue.post = nullptr;
  if (kc <= 0 || kc > k) kc = k;
  for (int64_t k0 = 0; k0 < k || k0 == 0; k0 += kc) {
    const int64_t kn = std::min(kc, k - k0);
    const bool first = k0 == 0, last = k0 + kn >= k;
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t i0 = p * MR;
      const float* ap = a->data.data() + p * k * MR + k0 * MR;
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t j0 = q * NR;
        MicroTile<MR, NR>(ap, bp + (q - q0) * qstride + k0 * ldb, ldb, kn, c + i0 * ldc + j0, ldc,
                          std::min<int64_t>(MR, m - i0), std::min<int64_t>(NR, n - j0),
                          TileAt(tile_epilogue, i0, j0, ldc), first, last);
      }
    }
    if (kn == 0) break;
  }
  if (!post_per_tile && e->post != nullptr) {
    const int64_t i0 = p0 * MR, j0 = q0 * NR;
    unary_rows(*e->post, c + i0 * ldc + j0, ldc, std::min(p1 * MR, m) - i0,
               std::min(q1 * NR, n) - j0);
  }
}

// The compiled tiles (compiled_gemm_tiles lists them from the same macro).
// Rows 1: matrix-vector products (a classifier's one-row Gemm), where 8-row panels multiplied
// seven rows of zero padding.
#define TESSERA_GEMM_TILES(X) \
  X(6, 16) X(8, 16) X(12, 16) X(6, 32) X(8, 32) X(12, 32) X(1, 16) X(1, 32)

// The tile is a->panel rows by nr columns.
HWY_ATTR void PanelBlock(const PackedMatrix* a, int64_t nr, const float* bp, int64_t ldb,
                         int64_t qstride, int64_t n, int64_t q0, int64_t q1, float* c, int64_t ldc,
                         const Epilogue* e, int64_t p0, int64_t p1, int64_t kc,
                         bool post_per_tile) {
#define TESSERA_TILE_CASE(R, C)                                                                  \
  if (a->panel == (R) && nr == (C)) {                                                            \
    return PanelBlockT<R, C>(a, bp, ldb, qstride, n, q0, q1, c, ldc, e, p0, p1, kc,             \
                             post_per_tile);                                                     \
  }
  TESSERA_GEMM_TILES(TESSERA_TILE_CASE)
#undef TESSERA_TILE_CASE
}

// Tiles of row panels [p0, p1) x column panels [q0, q1) of packed A and B.
HWY_ATTR void GemmBlock(const PackedMatrix* a, const PackedMatrix* b, float* c, int64_t ldc,
                        const Epilogue* e, int64_t p0, int64_t p1, int64_t q0, int64_t q1) {
  const int64_t nr = b->panel, panel_floats = b->rows * nr;
  for (int64_t q = q0; q < q1; ++q) {
    PanelBlock(a, nr, b->data.data() + q * panel_floats, nr, panel_floats, b->cols, q, q + 1, c,
               ldc, e, p0, p1, 0, true);
  }
}

// C (all of A's rows by n columns, n <= NR * whole tiles) = A * B with B's row p at
// b + off[p] (n floats from there): a conv's window rows read in place from its phase planes.
// Column tiles outer, row panels inner, so a tile's K x NR floats of B stay in L1 for all of M.
template <int MR, int NR>
HWY_ATTR void PhaseBlockT(const PackedMatrix* a, const float* b, const int64_t* off, int64_t n,
                          float* c, int64_t ldc, const Epilogue* e) {
  const int64_t m = a->rows, k = a->cols;
  // The post op in one pass over the block (one output row of every channel) after its tiles:
  // per tile measured slower on the stems (fastvit's 3 -> 48 + GELU at 128x128: 1290 against
  // 1160 us).
  Epilogue tile_epilogue = *e;
  tile_epilogue.post = nullptr;
  for (int64_t j0 = 0; j0 < n; j0 += NR) {
    for (int64_t i0 = 0; i0 < m; i0 += MR) {
      AnyTile<MR, NR>(a->data.data() + i0 * k, OffsetRows{b + j0, off}, k, c + i0 * ldc + j0, ldc,
                      std::min<int64_t>(MR, m - i0), std::min<int64_t>(NR, n - j0),
                      TileAt(tile_epilogue, i0, j0, ldc), true, true);
    }
  }
  if (e->post != nullptr) unary_rows(*e->post, c, ldc, m, n);
}

HWY_ATTR void PhaseBlock(const PackedMatrix* a, int64_t nr, const float* b, const int64_t* off,
                         int64_t n, float* c, int64_t ldc, const Epilogue* e) {
#define TESSERA_TILE_CASE(R, C) \
  if (a->panel == (R) && nr == (C)) return PhaseBlockT<R, C>(a, b, off, n, c, ldc, e);
  TESSERA_GEMM_TILES(TESSERA_TILE_CASE)
#undef TESSERA_TILE_CASE
}

// dst[t] = src[2 t] for t < len, de-interleaved a vector at a time (the stride-2 stem convs'
// im2col panels gathered this scalar). LoadInterleaved2 reads src[0, 2 N): only where that stays
// within the avail floats readable from src.
HWY_ATTR void GatherStride2(const float* HWY_RESTRICT src, int64_t len, int64_t avail,
                            float* HWY_RESTRICT dst) {
  int64_t t = 0;
  const DF d;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  for (; t + n <= len && 2 * (t + n) <= avail; t += n) {
    hn::Vec<DF> even, odd;
    hn::LoadInterleaved2(d, src + 2 * t, even, odd);
    hn::StoreU(even, d, dst + t);
  }
  const hn::CappedTag<float, 4> d4;
  const int64_t n4 = static_cast<int64_t>(hn::Lanes(d4));
  for (; t + n4 <= len && 2 * (t + n4) <= avail; t += n4) {
    hn::Vec<decltype(d4)> even, odd;
    hn::LoadInterleaved2(d4, src + 2 * t, even, odd);
    hn::StoreU(even, d4, dst + t);
  }
  for (; t < len; ++t) dst[t] = src[2 * t];
}

HWY_ATTR int64_t TargetLanes() {
  return static_cast<int64_t>(kLanes);
}

HWY_ATTR void ClampCopy(const float* x, float* y, int64_t n, float lo, float hi) {
  const hn::ScalableTag<float> d;
  const auto vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(hn::Min(hn::Max(hn::LoadU(d, x + i), vlo), vhi), d, y + i);
  }
  for (; i < n; ++i) y[i] = std::min(std::max(x[i], lo), hi);
}

// Sum of n floats, four vector accumulators (a single one was latency-bound).
HWY_ATTR float SumFloats(const float* HWY_RESTRICT x, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    a0 = hn::Add(a0, hn::LoadU(d, x + i));
    a1 = hn::Add(a1, hn::LoadU(d, x + i + lanes));
    a2 = hn::Add(a2, hn::LoadU(d, x + i + 2 * lanes));
    a3 = hn::Add(a3, hn::LoadU(d, x + i + 3 * lanes));
  }
  for (; i + lanes <= n; i += lanes) a0 = hn::Add(a0, hn::LoadU(d, x + i));
  float sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
  for (; i < n; ++i) sum += x[i];
  return sum;
}

HWY_ATTR void AddClamp(const float* a, const float* b, float* y, int64_t n, float lo, float hi) {
  const hn::ScalableTag<float> d;
  const auto vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto s = hn::Add(hn::LoadU(d, a + i), hn::LoadU(d, b + i));
    hn::StoreU(hn::Min(hn::Max(s, vlo), vhi), d, y + i);
  }
  for (; i < n; ++i) y[i] = std::min(std::max(a[i] + b[i], lo), hi);
}

// Interior output columns [ox, x_end) of one depthwise row, Lanes(d) at a time; returns the
// first column it did not write. Stride 2 de-interleaves with LoadInterleaved2, which reads one
// float past the last tap, so blocks stop where that would leave the row.
template <class D>
HWY_ATTR int64_t DepthwiseVectors(D d, const float* plane, const float* wk, const ConvGeometry& g,
                                  int64_t oy, int64_t ky_begin, int64_t ky_end, int64_t ox,
                                  int64_t x_end, float bias, float lo, float hi, float* dst) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t sw = g.sw;
  const auto vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  for (; ox + lanes <= x_end; ox += lanes) {
    if (sw == 2 && (ox + lanes - 1) * 2 - g.pl + g.kw >= g.w) break;
    auto acc = hn::Set(d, bias);
    for (int64_t ky = ky_begin; ky < ky_end; ++ky) {
      const float* row = plane + (oy * g.sh - g.pt + ky) * g.w + ox * sw - g.pl;
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        const auto wv = hn::Set(d, wk[ky * g.kw + kx]);
        if (sw == 1) {
          acc = hn::MulAdd(wv, hn::LoadU(d, row + kx), acc);
        } else {
          hn::Vec<D> even, odd;
          hn::LoadInterleaved2(d, row + kx, even, odd);
          acc = hn::MulAdd(wv, even, acc);
        }
      }
    }
    hn::StoreU(hn::Min(hn::Max(acc, vlo), vhi), d, dst + ox);
  }
  return ox;
}

// Depthwise conv of one channel. Interior columns (whole window inside the row) run full vectors,
// then 4-lane vectors for what is left (small late-layer rows such as 14 or 7 wide); border
// columns and strides other than 1 and 2 take the scalar path.
HWY_ATTR void DepthwiseChannel(const float* plane, const float* wk, const ConvGeometry* geom,
                               float bias, float lo, float hi, float* out) {
  const ConvGeometry& g = *geom;
  const int64_t sw = g.sw;
  const int64_t x_begin = std::min(g.ow, (g.pl + sw - 1) / sw);
  int64_t x_end = g.w - g.kw + g.pl >= 0 ? (g.w - g.kw + g.pl) / sw + 1 : 0;
  x_end = std::max(x_begin, std::min(g.ow, x_end));
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    const int64_t ky_begin = std::max<int64_t>(0, g.pt - oy * g.sh);
    const int64_t ky_end = std::min(g.kh, g.h + g.pt - oy * g.sh);
    auto scalar = [&](int64_t ox) {
      float acc = bias;
      for (int64_t ky = ky_begin; ky < ky_end; ++ky) {
        const float* row = plane + (oy * g.sh - g.pt + ky) * g.w;
        for (int64_t kx = 0; kx < g.kw; ++kx) {
          const int64_t ix = ox * sw - g.pl + kx;
          if (ix >= 0 && ix < g.w) acc += wk[ky * g.kw + kx] * row[ix];
        }
      }
      return std::min(std::max(acc, lo), hi);
    };
    float* dst = out + oy * g.ow;
    int64_t ox = 0;
    for (; ox < x_begin; ++ox) dst[ox] = scalar(ox);
    if (sw == 1 || sw == 2) {
      ox = DepthwiseVectors(hn::ScalableTag<float>(), plane, wk, g, oy, ky_begin, ky_end, ox, x_end,
                            bias, lo, hi, dst);
      ox = DepthwiseVectors(hn::CappedTag<float, 4>(), plane, wk, g, oy, ky_begin, ky_end, ox,
                            x_end, bias, lo, hi, dst);
    }
    for (; ox < g.ow; ++ox) dst[ox] = scalar(ox);
  }
}

// Depthwise conv of one channel from a zero-padded copy of the plane, so every output column runs
// the vector path (the old per-row border columns ran scalar and dominated on 14..112-wide rows).
// Horizontal stride 1 or 2: stride 2 splits each padded row into its even and odd columns
// (phases), so every tap is a unit-stride load. A block is RB output rows by NB vectors: RB * NB
// independent FMA chains in flight. One row at a time left a single chain of kh * kw dependent
// FMAs per vector on the 7..28-wide rows of late mobilenet layers, latency-bound at 4-6 GFLOPS.
// dst[r] is output row oy + r; rows are stored in order, so a whole vector running past the end of
// row r is overwritten by row r + 1.
template <int RB, int NB, class D>
HWY_ATTR void DepthwisePaddedBlock(D d, const float* pad, int64_t pw, int64_t phase_floats,
                                   const float* wk, const ConvGeometry& g, int64_t oy, int64_t xb,
                                   float bias, float lo, float hi, float* const* dst) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  hn::Vec<D> acc[RB][NB];
  for (int r = 0; r < RB; ++r) {
    for (int i = 0; i < NB; ++i) acc[r][i] = hn::Set(d, bias);
  }
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    const float* row = pad + (oy * g.sh + ky * g.dil_h) * pw + xb;
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      // Dilated windows come only at stride 1 (DepthwisePaddedApplies).
      const float* src =
          g.sw == 1 ? row + kx * g.dil_w : row + (kx & 1) * phase_floats + (kx >> 1);
      const auto wv = hn::Set(d, wk[ky * g.kw + kx]);
      for (int r = 0; r < RB; ++r) {
        for (int i = 0; i < NB; ++i) {
          acc[r][i] = hn::MulAdd(wv, hn::LoadU(d, src + r * g.sh * pw + i * lanes), acc[r][i]);
        }
      }
    }
  }
  const auto vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  for (int r = 0; r < RB; ++r) {
    for (int i = 0; i < NB; ++i) {
      hn::StoreU(hn::Min(hn::Max(acc[r][i], vlo), vhi), d, dst[r] + xb + i * lanes);
    }
  }
}

// RB output rows from oy, every column: blocks of up to 8 / RB vectors (8 accumulators at most),
// right to left, so the vector a row's last block writes past its end into the next row's first
// columns is overwritten by that row's first block, stored later.
template <int RB, class D>
HWY_ATTR void DepthwisePaddedRows(D d, const float* pad, int64_t pw, int64_t phase_floats,
                                  const float* wk, const ConvGeometry& g, int64_t oy, int64_t owr,
                                  float bias, float lo, float hi, float* const* dst) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t vectors = owr / lanes;
  const int64_t n4 = RB <= 2 ? vectors / 4 : 0;
  const int64_t n2 = RB <= 4 ? (vectors - 4 * n4) / 2 : 0;  // RB 3: 6 accumulators
  const int64_t n1 = vectors - 4 * n4 - 2 * n2;
  int64_t xb = owr;
  for (int64_t b = 0; b < n1; ++b) {
    xb -= lanes;
    DepthwisePaddedBlock<RB, 1>(d, pad, pw, phase_floats, wk, g, oy, xb, bias, lo, hi, dst);
  }
  if constexpr (RB <= 4) {
    for (int64_t b = 0; b < n2; ++b) {
      xb -= 2 * lanes;
      DepthwisePaddedBlock<RB, 2>(d, pad, pw, phase_floats, wk, g, oy, xb, bias, lo, hi, dst);
    }
  }
  if constexpr (RB <= 2) {
    for (int64_t b = 0; b < n4; ++b) {
      xb -= 4 * lanes;
      DepthwisePaddedBlock<RB, 4>(d, pad, pw, phase_floats, wk, g, oy, xb, bias, lo, hi, dst);
    }
  }
}

// Rows per block for `vectors` vectors per output row: 8 accumulators in all.
inline int64_t DepthwiseRowBlock(int64_t vectors) {
  return vectors >= 4 ? 2 : vectors >= 2 ? 4 : 8;
}

HWY_ATTR int64_t DepthwisePaddedLanes() {
  return static_cast<int64_t>(hn::Lanes(DF()));
}

template <class D>
HWY_ATTR void DepthwisePaddedImpl(D d, const float* plane, const float* wk, const ConvGeometry& g,
                                  float bias, float lo, float hi, float* out, float* scratch) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t owr = (g.ow + lanes - 1) / lanes * lanes;
  // Per phase row; covers xb + (kw - 1) / sw + lanes, rounded to whole vectors.
  const int64_t khe = (g.kh - 1) * g.dil_h + 1, kwe = (g.kw - 1) * g.dil_w + 1;  // extents
  const int64_t pw = (owr + kwe + lanes - 1) / lanes * lanes;
  const int64_t phases = g.sw;
  const int64_t rb = DepthwiseRowBlock(owr / lanes);
  // The plane runs in strips of output rows whose padded input rows fit in ~16 KiB, so they are
  // still in L1 when the FMAs read them (a whole 112-wide stride-2 plane padded was ~58 KiB, and
  // ran 3x slower than ONNX Runtime). Strips are whole row blocks; overlapping input rows
  // (kh - sh per strip) are padded twice.
  int64_t strip = rb;
  while (strip < g.oh && ((2 * strip - 1) * g.sh + khe) * pw * phases <= 4096) strip *= 2;
  const int64_t phase_floats = ((std::min(strip, g.oh) - 1) * g.sh + khe) * pw;
  float* rowbuf = scratch + phases * phase_floats;  // 8 * owr floats (a row block's tail rows)
  const auto vfill = hn::Zero(d);
  for (int64_t oy0 = 0; oy0 < g.oh; oy0 += strip) {
    const int64_t oy1 = std::min(g.oh, oy0 + strip);
    const int64_t r0 = oy0 * g.sh, r1 = (oy1 - 1) * g.sh + khe;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t iy = r - g.pt;
      const bool inside = iy >= 0 && iy < g.h;
      const float* src = plane + iy * g.w;
      if (phases == 1) {
        // Padded column X reads input column X - pl: the input row is copied as whole vectors (the
        // last one overlapping the one before) and only the borders are filled. Per-element border
        // checks had cost as much as the FMAs.
        float* dst = scratch + (r - r0) * pw;
        // Input columns past the padded row (never read by a window) are not copied.
        const int64_t n = inside ? std::max<int64_t>(0, std::min(g.w, pw - g.pl)) : 0;
        for (int64_t x = 0; x < g.pl; x += lanes) hn::StoreU(vfill, d, dst + x);
        float* interior = dst + g.pl;
        int64_t i = 0;
        for (; i + lanes <= n; i += lanes) hn::StoreU(hn::LoadU(d, src + i), d, interior + i);
        if (i < n && n >= lanes) {
          hn::StoreU(hn::LoadU(d, src + n - lanes), d, interior + n - lanes);
        } else if (i < n && iy * g.w + lanes <= g.h * g.w) {
          // A row narrower than a vector (7 or 14 wide): one vector that reads on into the next
          // input row (still inside this plane); the fill below overwrites what lands past n.
          hn::StoreU(hn::LoadU(d, src), d, interior);
        } else {
          for (; i < n; ++i) interior[i] = src[i];
        }
        // May pass the row by less than a vector: into the next row (written later) or, after the
        // last row, into rowbuf.
        for (int64_t x = g.pl + n; x < pw; x += lanes) hn::StoreU(vfill, d, dst + x);
        continue;
      }
      // Stride 2: phase p column j is padded column 2j + p = input column 2j + p - pl. The input
      // row's even columns ie[k] = in[2k] and odd ones io[k] = in[2k + 1] are de-interleaved
      // straight into the phase rows: with pl even, ie -> even at pl / 2, io -> odd at pl / 2;
      // with pl odd, io -> even at (pl + 1) / 2, ie -> odd at (pl - 1) / 2.
      float* even = scratch + (r - r0) * pw;
      float* odd = even + phase_floats;
      for (int64_t x = 0; x < pw; x += lanes) {
        hn::StoreU(vfill, d, even + x);
        hn::StoreU(vfill, d, odd + x);
      }
      if (!inside) continue;
      const bool pl_odd = (g.pl & 1) != 0;
      float* to_e = pl_odd ? odd + (g.pl - 1) / 2 : even + g.pl / 2;
      float* to_o = pl_odd ? even + (g.pl + 1) / 2 : odd + g.pl / 2;
      const int64_t room_e = pw - (pl_odd ? (g.pl - 1) / 2 : g.pl / 2);
      const int64_t room_o = pw - (pl_odd ? (g.pl + 1) / 2 : g.pl / 2);
      const int64_t ne = std::max<int64_t>(0, std::min((g.w + 1) / 2, room_e));
      const int64_t no = std::max<int64_t>(0, std::min(g.w / 2, room_o));
      int64_t k = 0;
      for (; k + lanes <= ne && k + lanes <= no; k += lanes) {
        hn::Vec<D> e, o;
        hn::LoadInterleaved2(d, src + 2 * k, e, o);
        hn::StoreU(e, d, to_e + k);
        hn::StoreU(o, d, to_o + k);
      }
      for (int64_t j = k; j < ne; ++j) to_e[j] = src[2 * j];
      for (int64_t j = k; j < no; ++j) to_o[j] = src[2 * j + 1];
    }
    // Whole vectors may run past a row into the next ones (written after it), but not past the
    // plane: the next plane belongs to another task. Rows whose vectors would are written to
    // rowbuf (one owr-float slot per row of a block) and copied out.
    for (int64_t oy = oy0; oy < oy1;) {
      const int64_t rows = std::min(rb, oy1 - oy);
      float* dst[8];
      for (int64_t r = 0; r < rows; ++r) {
        const bool tail_row = (oy + r) * g.ow + owr > g.oh * g.ow;
        dst[r] = tail_row ? rowbuf + r * owr : out + (oy + r) * g.ow;
      }
      const int64_t y = oy - oy0;  // row within the strip's padded rows
      switch (rows) {
#define TESSERA_DW_ROWS(R)                                                                  \
  case R:                                                                                   \
    DepthwisePaddedRows<R>(d, scratch, pw, phase_floats, wk, g, y, owr, bias, lo, hi, dst); \
    break;
        TESSERA_DW_ROWS(8)
        TESSERA_DW_ROWS(7)
        TESSERA_DW_ROWS(6)
        TESSERA_DW_ROWS(5)
        TESSERA_DW_ROWS(4)
        TESSERA_DW_ROWS(3)
        TESSERA_DW_ROWS(2)
#undef TESSERA_DW_ROWS
        default:
          DepthwisePaddedRows<1>(d, scratch, pw, phase_floats, wk, g, y, owr, bias, lo, hi, dst);
      }
      for (int64_t r = 0; r < rows; ++r) {
        if (dst[r] == rowbuf + r * owr) {
          for (int64_t i = 0; i < g.ow; ++i) out[(oy + r) * g.ow + i] = rowbuf[r * owr + i];
        }
      }
      oy += rows;
    }
  }
}

// scratch holds at least depthwise_padded_floats(g, DepthwisePaddedLanes()) floats. Rows at most
// 8 wide (late mobilenet layers) use 8-lane vectors so fewer lanes are wasted.
HWY_ATTR void DepthwisePaddedChannel(const float* plane, const float* wk, const ConvGeometry* geom,
                                     float bias, float lo, float hi, float* out, float* scratch) {
  if (geom->ow <= 8 && HWY_LANES(float) > 8) {
    DepthwisePaddedImpl(hn::CappedTag<float, 8>(), plane, wk, *geom, bias, lo, hi, out, scratch);
  } else {
    DepthwisePaddedImpl(DF(), plane, wk, *geom, bias, lo, hi, out, scratch);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace tessera::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <tbb/blocked_range2d.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <stdexcept>

namespace tessera::cpu {

HWY_EXPORT(GemmBlock);
HWY_EXPORT(TargetLanes);
HWY_EXPORT(GatherStride2);
HWY_EXPORT(PanelBlock);
HWY_EXPORT(PhaseBlock);
HWY_EXPORT(ClampCopy);
HWY_EXPORT(AddClamp);
HWY_EXPORT(SumFloats);
HWY_EXPORT(DepthwiseChannel);
HWY_EXPORT(DepthwisePaddedChannel);
HWY_EXPORT(DepthwisePaddedLanes);

namespace {
// Floats of scratch DepthwisePaddedImpl needs per thread.
int64_t padded_scratch_floats(const ConvGeometry& g) {
  const int64_t lanes = HWY_DYNAMIC_DISPATCH(DepthwisePaddedLanes)();
  const int64_t owr = (g.ow + lanes - 1) / lanes * lanes;
  const int64_t khe = (g.kh - 1) * g.dil_h + 1, kwe = (g.kw - 1) * g.dil_w + 1;
  const int64_t pw = (owr + kwe + lanes - 1) / lanes * lanes;
  return g.sw * ((g.oh - 1) * g.sh + khe) * pw + 8 * owr + g.sw * pw;
}
}  // namespace

namespace {

// One channel of a dilated depthwise conv: per output row, each tap adds a weighted run of the
// input row (unit stride at stride 1, so the compiler vectorises it) to an accumulator row.
void depthwise_dilated_channel(const float* x, const float* w, const ConvGeometry& g, float bias,
                               float lo, float hi, float* y) {
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    float* out = y + oy * g.ow;
    std::fill(out, out + g.ow, bias);
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      const int64_t iy = oy * g.sh - g.pt + ky * g.dil_h;
      if (iy < 0 || iy >= g.h) continue;
      const float* row = x + iy * g.w;
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        const float wk = w[ky * g.kw + kx];
        // ix = ox * sw - pl + kx * dil_w in [0, w): ox in [ox0, ox1).
        const int64_t base = kx * g.dil_w - g.pl;
        int64_t ox0, ox1;
        tap_output_range(g.w, g.ow, g.sw, g.pl, kx * g.dil_w, &ox0, &ox1);
        if (g.sw == 1) {
          const float* src = row + base;
          for (int64_t ox = ox0; ox < ox1; ++ox) out[ox] += wk * src[ox];
        } else {
          for (int64_t ox = ox0; ox < ox1; ++ox) out[ox] += wk * row[ox * g.sw + base];
        }
      }
    }
    for (int64_t ox = 0; ox < g.ow; ++ox) out[ox] = std::min(std::max(out[ox], lo), hi);
  }
}

}  // namespace

void depthwise_conv(const float* x, const float* w, const float* bias, const ConvGeometry& g,
                    float lo, float hi, float* y, const UnaryFn* post) {
  const int64_t plane = g.oh * g.ow;
  // The post op runs on each channel's plane right after it is computed (still in L2).
  auto finish = [&](int64_t c) {
    if (post != nullptr) unary_rows(*post, y + c * plane, plane, 1, plane);
  };
  if (depthwise_prefers_blocked(g) && depthwise_blocked(x, w, bias, g, lo, hi, y, post)) return;
  // Dilated windows at stride 1 are contiguous runs of a padded row like undilated ones (the
  // taps are d apart): the padded SIMD kernel runs them. Other dilated convs take the tap loop.
  if (g.dilated() && !(g.sh == 1 && g.sw == 1 && g.oh > 0 && g.ow > 0)) {
    tbb::parallel_for(int64_t{0}, g.c, [&](int64_t c) {
      depthwise_dilated_channel(x + c * g.h * g.w, w + c * g.kh * g.kw, g, bias ? bias[c] : 0.0f,
                                lo, hi, y + c * plane);
      finish(c);
    });
    return;
  }
  if (depthwise_linear(x, w, bias, g, lo, hi, y, post)) return;
  if ((g.sw == 1 || g.sw == 2) && g.oh > 0 && g.ow > 0) {
    const int64_t floats = padded_scratch_floats(g);
    tbb::parallel_for(int64_t{0}, g.c, [&](int64_t c) {
      HWY_DYNAMIC_DISPATCH(DepthwisePaddedChannel)
      (x + c * g.h * g.w, w + c * g.kh * g.kw, &g, bias ? bias[c] : 0.0f, lo, hi, y + c * plane,
       thread_scratch<struct DepthwisePaddedScratch>(floats));
      finish(c);
    });
    return;
  }
  tbb::parallel_for(int64_t{0}, g.c, [&](int64_t c) {
    HWY_DYNAMIC_DISPATCH(DepthwiseChannel)
    (x + c * g.h * g.w, w + c * g.kh * g.kw, &g, bias ? bias[c] : 0.0f, lo, hi, y + c * plane);
    finish(c);
  });
}

std::string simd_features() {
  std::string out;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    std::string name = hwy::TargetName(target);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (name == "avx3") name = "avx512";
    if (!out.empty()) out += ' ';
    out += name;
  }
  return out;
}

std::string simd_best_target() {
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  return targets.empty() ? "none" : hwy::TargetName(targets.front());
}

void gather_stride2(const float* src, int64_t len, int64_t avail, float* dst) {
  HWY_DYNAMIC_DISPATCH(GatherStride2)(src, len, avail, dst);
}

std::vector<GemmTile> compiled_gemm_tiles() {
  std::vector<GemmTile> out;
#define TESSERA_TILE_ENTRY(R, C) out.push_back(GemmTile{R, C});
  TESSERA_GEMM_TILES(TESSERA_TILE_ENTRY)
#undef TESSERA_TILE_ENTRY
  return out;
}

bool gemm_tile_compiled(int64_t mr, int64_t nr) {
  for (const GemmTile& t : compiled_gemm_tiles()) {
    if (t.mr == mr && t.nr == nr) return true;
  }
  return false;
}

std::vector<GemmTile> gemm_tiles() {
  // 16-float vectors: AVX-512, 32 registers, so even 12x32 (24 accumulators + 2 B vectors) fits.
  if (HWY_DYNAMIC_DISPATCH(TargetLanes)() < 16) return {GemmTile{}};
  std::vector<GemmTile> out;
  for (const GemmTile& t : compiled_gemm_tiles()) {
    if (t.mr > 1) out.push_back(t);  // one-row tiles are for one-row products only
  }
  return out;
}

GemmTile one_row_tile() {
  return HWY_DYNAMIC_DISPATCH(TargetLanes)() < 16 ? GemmTile{1, kNR} : GemmTile{1, 32};
}

GemmTile default_gemm_tile() {
  return HWY_DYNAMIC_DISPATCH(TargetLanes)() < 16 ? GemmTile{} : GemmTile{8, 32};
}

namespace {
void check_tile(int64_t mr, int64_t nr) {
  if (!gemm_tile_compiled(mr, nr)) {
    throw std::invalid_argument("cpu kernels: no SGEMM micro-tile " + std::to_string(mr) + "x" +
                                std::to_string(nr) +
                                " (compiled: rows 6/8/12 by columns 16/32, and 1 x 16/32)");
  }
}
}  // namespace

void sgemm_packed(const PackedMatrix& a, const PackedMatrix& b, float* c, int64_t ldc,
                  const Epilogue& epilogue, const GemmBlocking& blocking) {
  const int64_t mr = a.panel, nr = b.panel;
  check_tile(mr, nr);
  const int64_t row_panels = (a.rows + mr - 1) / mr;
  const int64_t col_panels = (b.cols + nr - 1) / nr;
  if (row_panels == 0 || col_panels == 0) return;
  const int64_t mp = std::max<int64_t>(1, (blocking.mc + mr - 1) / mr);
  const int64_t np = std::max<int64_t>(1, (blocking.nc + nr - 1) / nr);
  tbb::parallel_for(tbb::blocked_range2d<int64_t>(0, row_panels, mp, 0, col_panels, np),
                    [&](const tbb::blocked_range2d<int64_t>& r) {
                      HWY_DYNAMIC_DISPATCH(GemmBlock)
                      (&a, &b, c, ldc, &epilogue, r.rows().begin(), r.rows().end(),
                       r.cols().begin(), r.cols().end());
                    });
}

void sgemm_panels(const PackedMatrix& a, int64_t n, const PanelPacker& pack_panel, float* c,
                  int64_t ldc, const Epilogue& epilogue, const GemmBlocking& blocking,
                  const float* direct_b, int64_t ldb) {
  const int64_t mr = a.panel, nr = blocking.nr;
  check_tile(mr, nr);
  const int64_t row_panels = (a.rows + mr - 1) / mr;
  const int64_t col_panels = (n + nr - 1) / nr;
  if (row_panels == 0 || col_panels == 0) return;
  const int64_t mp = std::max<int64_t>(1, (blocking.mc + mr - 1) / mr);
  const int64_t np = std::max<int64_t>(1, (blocking.nc + nr - 1) / nr);
  const int64_t panel_floats = std::max<int64_t>(1, a.cols) * nr;
  if (blocking.b_whole || !blocking.b_direct || ldb <= 0) direct_b = nullptr;
  if (blocking.b_whole) {
    // B is the small operand: pack it all once, then every task streams its rows of A once.
    float* b = thread_scratch<struct WholeBScratch>(panel_floats * col_panels);
    tbb::parallel_for(int64_t{0}, col_panels,
                      [&](int64_t q) { pack_panel(q * nr, b + q * panel_floats); });
    tbb::parallel_for(
        tbb::blocked_range2d<int64_t>(0, row_panels, mp, 0, col_panels, np),
        [&](const tbb::blocked_range2d<int64_t>& r) {
          HWY_DYNAMIC_DISPATCH(PanelBlock)
          (&a, nr, b + r.cols().begin() * panel_floats, nr, panel_floats, n, r.cols().begin(),
           r.cols().end(), c, ldc, &epilogue, r.rows().begin(), r.rows().end(), blocking.kc,
           false);
        },
        tbb::simple_partitioner());
    return;
  }
  tbb::parallel_for(
      tbb::blocked_range2d<int64_t>(0, row_panels, mp, 0, col_panels, np),
      [&](const tbb::blocked_range2d<int64_t>& r) {
        // One packed B panel per worker thread, reused across tasks and runs.
        float* panel = thread_scratch<struct BPanelScratch>(panel_floats);
        int64_t q = r.cols().begin();
        if (direct_b != nullptr) {
          // The task's whole panels in one block, row panels outer: each row of C is written
          // nc floats at a time rather than NR, and B's rows (nc floats each) are read in place.
          const int64_t q_full = std::min(r.cols().end(), n / nr);
          if (q_full > q) {
            HWY_DYNAMIC_DISPATCH(PanelBlock)
            (&a, nr, direct_b + q * nr, ldb, nr, n, q, q_full, c, ldc, &epilogue,
             r.rows().begin(), r.rows().end(), blocking.kc, true);
            q = q_full;
          }
        }
        for (; q < r.cols().end(); ++q) {
          pack_panel(q * nr, panel);
          HWY_DYNAMIC_DISPATCH(PanelBlock)
          (&a, nr, panel, nr, panel_floats, n, q, q + 1, c, ldc, &epilogue, r.rows().begin(),
           r.rows().end(), blocking.kc, true);
        }
      },
      tbb::simple_partitioner());
}

void gemm_offset_rows(const PackedMatrix& a, const float* b, const int64_t* off, int64_t n,
                      int64_t nr, float* c, int64_t ldc, const Epilogue& epilogue) {
  check_tile(a.panel, nr);
  HWY_DYNAMIC_DISPATCH(PhaseBlock)(&a, nr, b, off, n, c, ldc, &epilogue);
}

void gemm_block_direct(const PackedMatrix& a, const float* b, int64_t ldb, int64_t n, int64_t nr,
                       float* c, int64_t ldc) {
  check_tile(a.panel, nr);
  const int64_t row_panels = (a.rows + a.panel - 1) / a.panel;
  const Epilogue e;
  HWY_DYNAMIC_DISPATCH(PanelBlock)
  (&a, nr, b, ldb, nr, n, 0, n / nr, c, ldc, &e, 0, row_panels, 0, false);
}

void clamp_inplace(float* x, int64_t n, float lo, float hi) {
  clamp_copy(x, x, n, lo, hi);
}

void clamp_copy(const float* x, float* y, int64_t n, float lo, float hi) {
  constexpr int64_t kChunk = 1 << 16;
  tbb::parallel_for(int64_t{0}, (n + kChunk - 1) / kChunk, [&](int64_t i) {
    const int64_t b = i * kChunk;
    HWY_DYNAMIC_DISPATCH(ClampCopy)(x + b, y + b, std::min(kChunk, n - b), lo, hi);
  });
}

void global_average_pool(const float* x, int64_t planes, int64_t inner, float lo, float hi,
                         float* y) {
  tbb::parallel_for(int64_t{0}, planes, [&](int64_t p) {
    const float mean =
        HWY_DYNAMIC_DISPATCH(SumFloats)(x + p * inner, inner) / static_cast<float>(inner);
    y[p] = std::min(std::max(mean, lo), hi);
  });
}

void add_clamp(const float* a, const float* b, float* y, int64_t n, float lo, float hi) {
  constexpr int64_t kChunk = 1 << 16;
  tbb::parallel_for(int64_t{0}, (n + kChunk - 1) / kChunk, [&](int64_t i) {
    const int64_t s = i * kChunk;
    HWY_DYNAMIC_DISPATCH(AddClamp)(a + s, b + s, y + s, std::min(kChunk, n - s), lo, hi);
  });
}

}  // namespace tessera::cpu
#endif  // HWY_ONCE
