// f32_gconv2d_chw_3x3: grouped 3x3 convolution (float32, NCHW, stride 1 or 2) for groups of a
// few channels (4..16 in and out; regnet's group width 8), computed directly: no im2col, no GEMM
// packing, no per-group GEMM call.
//
// A task is one group and a block of output rows. It splits the group's input channels into
// stride x stride zero-padded phase planes in per-thread scratch, all with the row pitch
// P = OW + 2 / stride, so window tap (c, ky, kx) reads its phase plane at a constant offset from
// the flattened position j = oy * P + ox. The block is then computed flat in j: up to 8 output
// channels x 3 vectors of accumulators in registers, one weight broadcast feeding 3 FMAs, over the
// group's channels and the 9 taps. Flat positions run across row ends, so 7- and 14-wide rows
// fill whole vectors; the P - OW pad columns each row carries are dropped as a vector is stored
// (Compress), together with the bias, the residual and the clamp.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/f32_gconv2d_chw_3x3.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/partial_vectors-inl.h"

#include <algorithm>
#include <cstring>

#include "kernels/kernels.hpp"

#ifndef TESSERA_CPU_GCONV_PLAN
#define TESSERA_CPU_GCONV_PLAN
namespace tessera::cpu {

// Weights packed per group and per chunk of at most kGconvChunk output channels: [k][kGconvChunk]
// (k = c * 9 + ky * 3 + kx), rows past the chunk zero, so one k step's weights are adjacent.
constexpr int64_t kGconvChunk = 8;

// Zero floats after each phase plane: the last vector of a block reads up to a vector past the
// plane's rows.
constexpr int64_t kGconvPlanePad = 32;

// How one call's tasks lay out their scratch and read it; the same for every task.
struct GconvPlan {
  ConvGeometry g;
  int64_t cin = 0, cout = 0;      // channels per group
  int64_t pitch = 0;              // P, floats per phase-plane row: OW + 2 / stride
  int64_t rows = 0;               // output rows per task (a group's last block may have fewer)
  int64_t blocks = 0;             // row blocks per group
  int64_t plane_floats = 0;       // (rows + 2 / stride) rows of P, then kGconvPlanePad zeros
  std::vector<int64_t> off;       // per k: the tap's offset into the task's phase planes
  std::vector<uint8_t> col_bits;  // per column phase f < P, 8 bytes: lane l set if
                                  // (f + l) mod P < OW (a real output column)
  int64_t scratch_floats() const { return cin * g.sh * g.sh * plane_floats; }
};

}  // namespace tessera::cpu
#endif

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_HAVE_SCALABLE
constexpr int64_t kL = 4;
using DG = hn::FixedTag<float, 4>;
#else
constexpr int64_t kL = HWY_LANES(float) > 16 ? 16 : static_cast<int64_t>(HWY_LANES(float));
using DG = hn::CappedTag<float, kL>;
#endif

// Vectors of output positions per block: 3 (8 x 3 accumulators) with 32 vector registers, 1 on
// targets with 16 (x86 below AVX-512) or none.
#if (HWY_ARCH_X86 && HWY_TARGET > HWY_AVX3) || HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
constexpr int kBlockVecs = 1;
#else
constexpr int kBlockVecs = 3;
#endif

// dst[i] = src[i] for i < len (len >= lanes) in whole vectors, the last one moved back to end
// at len; with `split`, also dst2[i] = src[2 i + 1] and dst[i] = src[2 i], reading src[0, 2 len).
template <bool kSplit, class D>
HWY_ATTR HWY_INLINE void CopyRun(D d, const float* HWY_RESTRICT src, int64_t len,
                                 float* HWY_RESTRICT dst, float* HWY_RESTRICT dst2) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t i = 0;; i += lanes) {
    i = std::min(i, len - lanes);
    if constexpr (kSplit) {
      hn::Vec<D> even, odd;
      hn::LoadInterleaved2(d, src + 2 * i, even, odd);
      hn::StoreU(even, d, dst + i);
      hn::StoreU(odd, d, dst2 + i);
    } else {
      hn::StoreU(hn::LoadU(d, src + i), d, dst + i);
    }
    if (i + lanes >= len) break;
  }
}

// CopyRun in the widest vectors len fills, scalars below 4.
template <bool kSplit>
HWY_ATTR HWY_INLINE void CopyExact(const float* HWY_RESTRICT src, int64_t len,
                                   float* HWY_RESTRICT dst, float* HWY_RESTRICT dst2) {
  const DG full;
  if (len >= static_cast<int64_t>(hn::Lanes(full)))
    return CopyRun<kSplit>(full, src, len, dst, dst2);
#if HWY_TARGET != HWY_SCALAR
  const hn::CappedTag<float, 8> eight;
  const hn::CappedTag<float, 4> four;
  if (hn::Lanes(eight) == 8 && len >= 8) return CopyRun<kSplit>(eight, src, len, dst, dst2);
  if (hn::Lanes(four) == 4 && len >= 4) return CopyRun<kSplit>(four, src, len, dst, dst2);
#endif
  for (int64_t i = 0; i < len; ++i) {
    if constexpr (kSplit) {
      dst[i] = src[2 * i];
      dst2[i] = src[2 * i + 1];
    } else {
      dst[i] = src[i];
    }
  }
}

// Zeros [0, n), n > 0, in whole vectors, so up to a vector past n: the phase rows are written in
// order and each plane's last row is followed by its pad, so what a row spills into is written
// after. The first vector is stored outside the loop: a row's edges need one or two floats, and
// GCC turns a plain zeroing loop into a memset call.
HWY_ATTR HWY_INLINE void ZeroVectors(int64_t n, float* HWY_RESTRICT dst) {
  const DG d;
  hn::StoreU(hn::Zero(d), d, dst);
  for (int64_t i = kL; i < n; i += kL) hn::StoreU(hn::Zero(d), d, dst + i);
}

// Stride 1: one plane, row r holding padded input row oy0 + r: dst[i] = row[i - pl] inside the
// row, else 0, for i < n (row == nullptr: a padding row).
HWY_ATTR HWY_INLINE void PhaseRow1(const float* row, int64_t w, int64_t pl, int64_t n, float* dst) {
  int64_t i0 = 0, i1 = 0;
  if (row != nullptr) {
    i0 = std::min(n, pl);
    i1 = std::max(i0, std::min(n, w + pl));
  }
  if (i0 > 0) ZeroVectors(i0, dst);
  if (i1 > i0) CopyExact<false>(row + (i0 - pl), i1 - i0, dst + i0, nullptr);
  if (i1 < n) ZeroVectors(n - i1, dst + i1);
}

// Stride 2: both column phases of one input row, split in one pass. Phase px, column i, holds input
// column 2 i + px - pl: for pl = 1, phase 1 is the even columns from i = 0 and phase 0 the odd ones
// from i = 1. Each half is stored straight into its phase row (copying it on from a buffer would
// stall every load on store forwarding), with zeros before and after it up to P; a row may spill
// a float or two into the next row of its plane, which is written after it.
HWY_ATTR HWY_INLINE void SplitRow2(const float* row, int64_t w, int64_t pl, int64_t pitch,
                                   float* dst0, float* dst1) {
  // Half h (0 even, 1 odd) starts at phase column `at[h]` of phase `phase[h]`.
  float* rows[2] = {dst0, dst1};
  int64_t at[2], phase[2];
  for (int64_t px = 0; px < 2; ++px) {
    const int64_t c0 = px - pl;             // input column of phase column 0
    const int64_t h = c0 % 2 == 0 ? 0 : 1;  // its half
    phase[h] = px;
    at[h] = -(c0 - h) / 2;  // phase column of the half's first element
  }
  float* even = rows[phase[0]] + at[0];
  float* odd = rows[phase[1]] + at[1];
  // Zeros before the halves (at most one float each) first: a vector of them overlaps the halves.
  if (at[0] > 0) ZeroVectors(at[0], rows[phase[0]]);
  if (at[1] > 0) ZeroVectors(at[1], rows[phase[1]]);
  const int64_t pairs = w / 2;
  CopyExact<true>(row, pairs, even, odd);
  if (w % 2 != 0) even[pairs] = row[w - 1];
  const int64_t counts[2] = {(w + 1) / 2, w / 2};
  for (int64_t h = 0; h < 2; ++h) {
    if (at[h] + counts[h] < pitch) {
      ZeroVectors(pitch - at[h] - counts[h], rows[phase[h]] + at[h] + counts[h]);
    }
  }
}

// The task's phase planes: for input channel c of the group and phase (py, px), row r holds padded
// input row S (oy0 + r) + py, columns S i + px, i < P.
template <int S>
HWY_ATTR void BuildPlanes(const float* x, const GconvPlan& p, int64_t oy0, int64_t zrows,
                          float* planes) {
  const ConvGeometry& g = p.g;
  for (int64_t c = 0; c < p.cin; ++c) {
    const float* plane = x + c * g.h * g.w;
    for (int64_t r = 0; r < zrows; ++r) {
      for (int64_t py = 0; py < S; ++py) {
        const int64_t iy = S * (oy0 + r) + py - g.pt;
        const float* row = iy >= 0 && iy < g.h ? plane + iy * g.w : nullptr;
        float* dst = planes + (c * S + py) * S * p.plane_floats + r * p.pitch;
        if constexpr (S == 1) {
          PhaseRow1(row, g.w, g.pl, p.pitch, dst);
        } else if (row == nullptr) {
          ZeroVectors(p.pitch, dst);
          ZeroVectors(p.pitch, dst + p.plane_floats);
        } else {
          SplitRow2(row, g.w, g.pl, p.pitch, dst, dst + p.plane_floats);
        }
      }
    }
    for (int64_t ph = 0; ph < S * S; ++ph) {
      ZeroVectors(kGconvPlanePad, planes + (c * S * S + ph) * p.plane_floats + zrows * p.pitch);
    }
  }
}

// Where a chunk's outputs go: output channel r of the chunk at y + r * ldc (and the residual at
// res + r * ldc), flat output position j of the task at (j / P) * OW + min(j mod P, OW).
struct ChunkOut {
  float* y;
  const float* res;   // nullptr: none
  const float* bias;  // per output channel of the chunk, nullptr: none
  int64_t ldc;
  float lo, hi;
};

// NV vectors of flat positions from j0 for the chunk's M output channels: the K steps, then each
// vector compacted to its real output columns and stored with bias, residual and clamp.
template <int M, int NV>
HWY_ATTR void GconvBlock(const float* HWY_RESTRICT planes, const int64_t* HWY_RESTRICT off,
                         int64_t k, const float* HWY_RESTRICT w, int64_t j0, int64_t n,
                         const GconvPlan& p, const ChunkOut& o) {
  const DG d;
  using V = hn::Vec<DG>;
  V acc[M][NV];
  for (int r = 0; r < M; ++r) {
    for (int v = 0; v < NV; ++v) acc[r][v] = hn::Zero(d);
  }
  const float* HWY_RESTRICT base = planes + j0;
  for (int64_t q = 0; q < k; ++q) {
    const float* HWY_RESTRICT b = base + off[q];
    V bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = hn::LoadU(d, b + v * kL);
    for (int r = 0; r < M; ++r) {
      const V a = hn::Set(d, w[r]);
      for (int v = 0; v < NV; ++v) acc[r][v] = hn::MulAdd(a, bv[v], acc[r][v]);
    }
    w += kGconvChunk;
  }
  const V vlo = hn::Set(d, o.lo), vhi = hn::Set(d, o.hi);
  for (int v = 0; v < NV; ++v) {
    const int64_t j = j0 + v * kL;
    if (j >= n) break;
    const int64_t row = j / p.pitch, col = j - row * p.pitch;
    const int64_t dst = row * p.g.ow + std::min(col, p.g.ow);
    const auto keep = hn::And(hn::LoadMaskBits(d, p.col_bits.data() + col * 8),
                              hn::FirstN(d, static_cast<size_t>(n - j)));
    const size_t count = hn::CountTrue(d, keep);
    const bool whole = count == static_cast<size_t>(kL);
    for (int r = 0; r < M; ++r) {
      V x = acc[r][v];
      if (o.bias != nullptr) x = hn::Add(x, hn::Set(d, o.bias[r]));
      float* out = o.y + r * o.ldc + dst;
      const float* res = o.res != nullptr ? o.res + r * o.ldc + dst : nullptr;
      if (whole) {
        if (res != nullptr) x = hn::Add(x, hn::LoadU(d, res));
        hn::StoreU(hn::Min(hn::Max(x, vlo), vhi), d, out);
        continue;
      }
      x = hn::Compress(x, keep);
      // Only the kept lanes are read and written: the next floats belong to another task.
      if (res != nullptr) x = hn::Add(x, LoadFirst(d, res, static_cast<int64_t>(count)));
      StoreFirst(hn::Min(hn::Max(x, vlo), vhi), d, out, static_cast<int64_t>(count));
    }
  }
}

// Flat positions [0, n) of the task for one chunk of M output channels.
template <int M>
HWY_ATTR void GconvChunk(const float* planes, const GconvPlan& p, const float* w, int64_t n,
                         const ChunkOut& o) {
  constexpr int64_t kBlock = kBlockVecs * kL;
  const int64_t k = p.cin * 9;
  int64_t j = 0;
  for (; j + kBlock < n; j += kBlock) {
    GconvBlock<M, kBlockVecs>(planes, p.off.data(), k, w, j, n, p, o);
  }
  // The rest: fewer than kBlockVecs vectors, the last one partial.
  const int64_t rest = (n - j + kL - 1) / kL;
  if constexpr (kBlockVecs == 3) {
    if (rest == 3) return GconvBlock<M, 3>(planes, p.off.data(), k, w, j, n, p, o);
    if (rest == 2) return GconvBlock<M, 2>(planes, p.off.data(), k, w, j, n, p, o);
  }
  if (rest == 1) GconvBlock<M, 1>(planes, p.off.data(), k, w, j, n, p, o);
}

// Output channels per chunk: the group's, split into the fewest chunks of at most kGconvChunk,
// as even as they go (12 -> 6 + 6, 10 -> 5 + 5).
HWY_INLINE int64_t ChunkRows(int64_t cout, int64_t chunk) {
  const int64_t chunks = (cout + kGconvChunk - 1) / kGconvChunk;
  return cout / chunks + (chunk < cout % chunks ? 1 : 0);
}

// Task t = (group, row block): phase planes, then every chunk of output channels.
HWY_ATTR void GconvTask(const float* x, const GconvPlan* plan, const float* weights,
                        const Epilogue* e, float* y, int64_t t) {
  const GconvPlan& p = *plan;
  const ConvGeometry& g = p.g;
  const int64_t grp = t / p.blocks, oy0 = (t % p.blocks) * p.rows;
  const int64_t rows = std::min(p.rows, g.oh - oy0);
  const int64_t zrows = rows + 2 / g.sh;
  float* planes = thread_scratch<struct GconvPlanes>(p.scratch_floats());
  const float* xg = x + grp * p.cin * g.h * g.w;
  if (g.sh == 1) {
    BuildPlanes<1>(xg, p, oy0, zrows, planes);
  } else {
    BuildPlanes<2>(xg, p, oy0, zrows, planes);
  }
  const int64_t plane = g.oh * g.ow, n = (rows - 1) * p.pitch + g.ow;
  const int64_t k = p.cin * 9;
  const int64_t chunks = (p.cout + kGconvChunk - 1) / kGconvChunk;
  const float* w = weights + grp * chunks * k * kGconvChunk;
  int64_t oc = grp * p.cout;
  for (int64_t c = 0; c < chunks; ++c, w += k * kGconvChunk) {
    const int64_t m = ChunkRows(p.cout, c);
    const int64_t at = oc * plane + oy0 * g.ow;
    const ChunkOut o{y + at,
                     e->residual != nullptr ? e->residual + at : nullptr,
                     e->row_bias != nullptr ? e->row_bias + oc : nullptr,
                     plane,
                     e->lo,
                     e->hi};
    switch (m) {
      case 1:
        GconvChunk<1>(planes, p, w, n, o);
        break;
      case 2:
        GconvChunk<2>(planes, p, w, n, o);
        break;
      case 3:
        GconvChunk<3>(planes, p, w, n, o);
        break;
      case 4:
        GconvChunk<4>(planes, p, w, n, o);
        break;
      case 5:
        GconvChunk<5>(planes, p, w, n, o);
        break;
      case 6:
        GconvChunk<6>(planes, p, w, n, o);
        break;
      case 7:
        GconvChunk<7>(planes, p, w, n, o);
        break;
      default:
        GconvChunk<8>(planes, p, w, n, o);
        break;
    }
    oc += m;
  }
  if (e->post != nullptr) {
    const int64_t at = grp * p.cout * plane + oy0 * g.ow;
    unary_rows(*e->post, y + at, plane, p.cout, rows * g.ow);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace tessera::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace tessera::cpu {

HWY_EXPORT(GconvTask);

namespace {

int64_t chunk_count(int64_t cout) {
  return (cout + kGconvChunk - 1) / kGconvChunk;
}

// A task's phase planes should stay in L2 beside its output block.
constexpr int64_t kScratchBudgetFloats = 32 * 1024;

GconvPlan plan_gconv(const ConvGeometry& g) {
  GconvPlan p;
  p.g = g;
  p.cin = g.c / g.group;
  p.cout = g.oc / g.group;
  const int64_t s = g.sh;
  p.pitch = g.ow + 2 / s;
  // Enough tasks that both threads of a 2-core machine stay busy to the end (about 8 per
  // thread), whether the conv has 55 groups on a 7x7 map or 6 on 56x56; blocks of at least 64
  // outputs, and no larger than the scratch budget.
  const int64_t threads = std::max(1, tbb::this_task_arena::max_concurrency());
  int64_t blocks = std::max<int64_t>(1, (8 * threads + g.group - 1) / g.group);
  blocks = std::min(blocks, std::max<int64_t>(1, g.oh * g.ow / 64));
  const int64_t row_floats = p.cin * s * s * p.pitch;
  const int64_t budget_rows = std::max<int64_t>(1, kScratchBudgetFloats / row_floats - 2 / s);
  blocks = std::max(blocks, (g.oh + budget_rows - 1) / budget_rows);
  blocks = std::min(blocks, g.oh);
  p.rows = (g.oh + blocks - 1) / blocks;
  p.blocks = (g.oh + p.rows - 1) / p.rows;
  p.plane_floats = ((p.rows + 2 / s) * p.pitch + kGconvPlanePad + 15) / 16 * 16;
  p.off.resize(static_cast<size_t>(p.cin * 9));
  for (int64_t c = 0; c < p.cin; ++c) {
    for (int64_t ky = 0; ky < 3; ++ky) {
      for (int64_t kx = 0; kx < 3; ++kx) {
        const int64_t phase = (c * s + ky % s) * s + kx % s;
        p.off[static_cast<size_t>((c * 3 + ky) * 3 + kx)] =
            phase * p.plane_floats + (ky / s) * p.pitch + kx / s;
      }
    }
  }
  p.col_bits.assign(static_cast<size_t>(p.pitch * 8), 0);
  for (int64_t f = 0; f < p.pitch; ++f) {
    for (int64_t l = 0; l < 64; ++l) {
      if ((f + l) % p.pitch < g.ow) p.col_bits[static_cast<size_t>(f * 8 + l / 8)] |= 1 << (l % 8);
    }
  }
  return p;
}

}  // namespace

bool f32_gconv2d_chw_3x3_applies(const ConvGeometry& g) {
  if (g.group < 1 || g.c % g.group != 0 || g.oc % g.group != 0) return false;
  const int64_t cin = g.c / g.group, cout = g.oc / g.group;
  return g.kh == 3 && g.kw == 3 && g.sh == g.sw && (g.sh == 1 || g.sh == 2) && !g.dilated() &&
         cin >= kGconvMinChannels && cin <= kGconvMaxChannels && cout >= kGconvMinChannels &&
         cout <= kGconvMaxChannels && g.pt >= 0 && g.pt <= 2 && g.pl >= 0 && g.pl <= 2 &&
         g.oh > 0 && g.ow > 0 && g.h > 0 && g.w > 0;
}

void f32_gconv2d_chw_3x3_pack(const float* w, const ConvGeometry& g, GconvWeights* out) {
  out->cin = g.c / g.group;
  out->cout = g.oc / g.group;
  out->group = g.group;
  const int64_t k = out->cin * 9, chunks = chunk_count(out->cout);
  out->data.assign(static_cast<size_t>(g.group * chunks * k * kGconvChunk), 0.0f);
  float* dst = out->data.data();
  for (int64_t grp = 0; grp < g.group; ++grp) {
    int64_t oc = grp * out->cout;
    for (int64_t c = 0; c < chunks; ++c, dst += k * kGconvChunk) {
      const int64_t m = out->cout / chunks + (c < out->cout % chunks ? 1 : 0);
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t q = 0; q < k; ++q) dst[q * kGconvChunk + r] = w[(oc + r) * k + q];
      }
      oc += m;
    }
  }
}

void f32_gconv2d_chw_3x3(const float* x, const ConvGeometry& g, const GconvWeights& w,
                         const Epilogue& epilogue, float* y) {
  const GconvPlan plan = plan_gconv(g);
  const int64_t tasks = g.group * plan.blocks;
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, tasks),
                    [&](const tbb::blocked_range<int64_t>& r) {
                      for (int64_t t = r.begin(); t < r.end(); ++t) {
                        HWY_DYNAMIC_DISPATCH(GconvTask)(x, &plan, w.data.data(), &epilogue, y, t);
                      }
                    });
}

}  // namespace tessera::cpu
#endif  // HWY_ONCE
