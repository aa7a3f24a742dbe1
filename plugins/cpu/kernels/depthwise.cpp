// Depthwise convolution over whole planes as one flat run of vectors ("linear planes"), for the
// "same"-shaped convs of mobile networks: stride 1 with OH x OW == H x W, or stride 2 with even H
// and W and OH x OW == H/2 x W/2, 3x3 or 5x5 windows.
//
// With the output plane flattened to j = oy * OW + ox, every tap (ky, kx) reads its input at
// j + a constant offset: for stride 1 straight from the plane, for stride 2 from one of four
// phase planes (even/odd input rows by even/odd input columns, each OH x OW) built by one
// de-interleaving pass. Rows above and below the plane read zero margins; a tap that crosses the
// left or right edge reads the neighbouring row instead, so each column of taps accumulates
// separately and is masked by output column before the sum. No per-row loops, no partial vectors
// at row ends: the 7..56-wide rows of mobilenet's late layers no longer waste most of a 16-lane
// vector, and the padded copy of every row (a third of the old kernel's time) is gone.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/depthwise.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/partial_vectors-inl.h"

#include <algorithm>
#include <cstring>

#include "kernels/kernels.hpp"

#ifndef TESSERA_CPU_LINEAR_PLAN
#define TESSERA_CPU_LINEAR_PLAN
namespace tessera::cpu {

// Where each tap of a linear-plane depthwise conv reads, shared by all channels.
struct LinearPlan {
  int64_t phases = 1;        // stride * stride phase planes
  int64_t n = 0;             // outputs per plane, OH * OW
  int64_t margin = 0;        // zero floats before, between and after the phase planes
  int64_t plane_floats = 0;  // n rounded up to 16
  int64_t offset[25] = {};   // per tap (ky * kw + kx): read position relative to j in scratch
  int64_t col_lo[5] = {}, col_hi[5] = {};  // per kx: valid output columns [lo, hi)
  int64_t scratch_floats() const { return phases * plane_floats + (phases + 1) * margin; }
};

}  // namespace tessera::cpu
#endif

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Zeroes the margins around the phase planes: once per block of channels (the planes' copies
// never write them).
HWY_ATTR void LinearMargins(const LinearPlan& p, float* scratch) {
  const int64_t stride = p.plane_floats + p.margin;
  // The margin before the first plane, and after each plane its round-up and margin.
  std::fill(scratch, scratch + p.margin, 0.0f);
  for (int64_t q = 0; q < p.phases; ++q) {
    float* after = scratch + p.margin + q * stride + p.n;
    std::fill(after, after + (stride - p.n), 0.0f);
  }
}

// even[c] = src[2 c], odd[c] = src[2 c + 1] for c < ow, in whole vectors: the last one overlaps
// the one before rather than finishing in scalar code (a third of a 56-wide row, all of a 7-wide
// one, had gone scalar: mobilenet's stride-2 depthwise on 14x14 planes took 2.7x ORT).
template <class D>
HWY_ATTR void DeinterleaveRow(D d, const float* src, int64_t ow, float* even, float* odd) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  if (ow < lanes) {
    if constexpr (HWY_LANES(float) > 4) {
      if (ow >= 4) return DeinterleaveRow(hn::CappedTag<float, 4>(), src, ow, even, odd);
    }
    for (int64_t c = 0; c < ow; ++c) {
      even[c] = src[2 * c];
      odd[c] = src[2 * c + 1];
    }
    return;
  }
  for (int64_t c = 0;; c += lanes) {
    c = std::min(c, ow - lanes);
    hn::Vec<D> e, o;
    hn::LoadInterleaved2(d, src + 2 * c, e, o);
    hn::StoreU(e, d, even + c);
    hn::StoreU(o, d, odd + c);
    if (c + lanes >= ow) break;
  }
}

// Copies the channel's plane into scratch as its phase planes.
template <class D>
HWY_ATTR void LinearScratch(D d, const float* plane, const ConvGeometry& g, const LinearPlan& p,
                            float* scratch) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t stride = p.plane_floats + p.margin;
  if (p.phases == 1) {
    // Inline vectors, not memcpy: a call cost as much as copying a 7x7 plane.
    float* dst = scratch + p.margin;
    int64_t i = 0;
    for (; i + lanes <= p.n; i += lanes) hn::StoreU(hn::LoadU(d, plane + i), d, dst + i);
    for (; i < p.n; ++i) dst[i] = plane[i];
    return;
  }
  // Stride 2: input row r goes to phase (r & 1, column parity), row r >> 1.
  for (int64_t r = 0; r < g.h; ++r) {
    const float* src = plane + r * g.w;
    float* even = scratch + p.margin + (2 * (r & 1)) * stride + (r >> 1) * g.ow;
    DeinterleaveRow(d, src, g.ow, even, even + stride);
  }
}

// One channel. KH x KW taps; every kx column of taps sums into its own accumulator, masked to the
// output columns where it stays inside the row, then bias and clamp.
template <int KH, int KW, class D>
HWY_ATTR void LinearChannel(D d, const float* scratch, const float* wk, const LinearPlan& p,
                            int64_t ow, float bias, float lo, float hi, float* out) {
  using V = hn::Vec<D>;
  const hn::RebindToSigned<D> di;
  using VI = hn::Vec<decltype(di)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  V w[KH * KW];
  for (int t = 0; t < KH * KW; ++t) w[t] = hn::Set(d, wk[t]);
  const float* src[KH * KW];
  for (int t = 0; t < KH * KW; ++t) src[t] = scratch + p.offset[t];
  VI clo[KW], chi[KW];
  bool masked[KW];
  for (int kx = 0; kx < KW; ++kx) {
    masked[kx] = p.col_lo[kx] > 0 || p.col_hi[kx] < ow;
    clo[kx] = hn::Set(di, static_cast<int32_t>(p.col_lo[kx]));
    chi[kx] = hn::Set(di, static_cast<int32_t>(p.col_hi[kx]));
  }
  // Output column of each lane: starts at l mod OW, advances by lanes mod OW per vector (counted
  // up without divisions: 64-bit modulos per lane had cost as much as a 7x7 plane's FMAs).
  alignas(64) int32_t first[16];
  for (int64_t l = 0, col = 0; l < lanes; ++l) {
    first[l] = static_cast<int32_t>(col);
    if (++col == ow) col = 0;
  }
  int64_t advance = lanes;
  while (advance >= ow) advance -= ow;
  VI ox = hn::Load(di, first);
  const VI step = hn::Set(di, static_cast<int32_t>(advance));
  const VI owv = hn::Set(di, static_cast<int32_t>(ow));
  const V vb = hn::Set(d, bias), vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  for (int64_t j = 0; j < p.n; j += lanes) {
    V acc[KW];
    for (int kx = 0; kx < KW; ++kx) acc[kx] = hn::Zero(d);
    for (int ky = 0; ky < KH; ++ky) {
      for (int kx = 0; kx < KW; ++kx) {
        const int t = ky * KW + kx;
        acc[kx] = hn::MulAdd(w[t], hn::LoadU(d, src[t] + j), acc[kx]);
      }
    }
    V sum = vb;
    for (int kx = 0; kx < KW; ++kx) {
      if (masked[kx]) {
        const auto inside = hn::AndNot(ox < clo[kx], ox < chi[kx]);
        sum = hn::Add(sum, hn::IfThenElseZero(hn::RebindMask(d, inside), acc[kx]));
      } else {
        sum = hn::Add(sum, acc[kx]);
      }
    }
    sum = hn::Min(hn::Max(sum, vlo), vhi);
    // The floats past the plane are the next channel's, which another task may be writing.
    StoreFirst(sum, d, out + j, p.n - j);
    ox = hn::Add(ox, step);
    ox = hn::Sub(ox, hn::IfThenZeroElse(ox < owv, owv));
  }
}

template <class D>
HWY_ATTR void LinearImpl(D d, const float* plane, const float* wk, const ConvGeometry& g,
                         const LinearPlan& p, float bias, float lo, float hi, float* out,
                         float* scratch) {
  LinearScratch(d, plane, g, p, scratch);
  if (g.kh == 3 && g.kw == 3) {
    LinearChannel<3, 3>(d, scratch, wk, p, g.ow, bias, lo, hi, out);
  } else {
    LinearChannel<5, 5>(d, scratch, wk, p, g.ow, bias, lo, hi, out);
  }
}

// Channels [c0, c1). Planes of at most 64 outputs (7x7, 8x8) run 8-lane vectors: less of the
// last vector wasted.
HWY_ATTR void DepthwiseLinearChannels(const float* x, const float* w, const float* bias,
                                      const ConvGeometry* g, const LinearPlan* p, float lo,
                                      float hi, float* y, int64_t c0, int64_t c1, float* scratch) {
  const int64_t in_plane = g->h * g->w, taps = g->kh * g->kw;
  LinearMargins(*p, scratch);
  for (int64_t c = c0; c < c1; ++c) {
    const float b = bias ? bias[c] : 0.0f;
    if (p->n <= 64 && HWY_LANES(float) > 8) {
      LinearImpl(hn::CappedTag<float, 8>(), x + c * in_plane, w + c * taps, *g, *p, b, lo, hi,
                 y + c * p->n, scratch);
    } else {
      LinearImpl(hn::CappedTag<float, 16>(), x + c * in_plane, w + c * taps, *g, *p, b, lo, hi,
                 y + c * p->n, scratch);
    }
  }
}

// Output columns [ox_lo, ox_hi) of one output row of a 3x3 pad-1 depthwise conv at stride S, in
// n-lane blocks (the last one shifted back to end at ox_hi). rows[ky] is input row s oy - 1 + ky,
// or nullptr outside the plane. Column taps kx = 0, 1, 2 sum separately so the taps that fall off
// the row (ox = 0 for kx = 0; ox = w - 1 for kx = 2 at stride 1) can be masked out: their loads
// read a neighbouring row or the caller's guard instead.
#if HWY_TARGET != HWY_SCALAR  // no ConcatEven/ConcatOdd there: DepthwiseRows3x3 goes scalar
template <int S, class D>
HWY_ATTR void DepthwiseRow3x3(D d, const float* const* rows, const float* wk, int64_t w,
                              int64_t ox_lo, int64_t ox_hi, float bias, float lo, float hi,
                              float* dst) {
  using V = hn::Vec<D>;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  const V vb = hn::Set(d, bias), vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  V wv[9];
  for (int t = 0; t < 9; ++t) wv[t] = hn::Set(d, wk[t]);
  const hn::RebindToSigned<D> di;
  const auto lane = hn::Iota(di, 0);
  auto block = [&](int64_t ox0) HWY_ATTR {
    V acc[3] = {hn::Zero(d), hn::Zero(d), hn::Zero(d)};
    const int64_t x0 = S * ox0 - 1;
    for (int ky = 0; ky < 3; ++ky) {
      const float* r = rows[ky];
      if (r == nullptr) continue;
      V tap[3];
      if constexpr (S == 1) {
        for (int kx = 0; kx < 3; ++kx) tap[kx] = hn::LoadU(d, r + x0 + kx);
      } else {
        const V a = hn::LoadU(d, r + x0), b = hn::LoadU(d, r + x0 + n);
        const V c = hn::LoadU(d, r + x0 + 1), e = hn::LoadU(d, r + x0 + 1 + n);
        tap[0] = hn::ConcatEven(d, b, a);
        tap[1] = hn::ConcatOdd(d, b, a);
        tap[2] = hn::ConcatOdd(d, e, c);
      }
      for (int kx = 0; kx < 3; ++kx) acc[kx] = hn::MulAdd(wv[ky * 3 + kx], tap[kx], acc[kx]);
    }
    if (ox0 == 0) {  // column -1 is padding
      acc[0] = hn::IfThenZeroElse(hn::RebindMask(d, hn::Eq(lane, hn::Zero(di))), acc[0]);
    }
    if (S == 1 && ox0 + n == w) {  // column w is padding
      const auto last = hn::Eq(lane, hn::Set(di, static_cast<int32_t>(n - 1)));
      acc[2] = hn::IfThenZeroElse(hn::RebindMask(d, last), acc[2]);
    }
    const V sum = hn::Add(hn::Add(hn::Add(acc[0], acc[1]), acc[2]), vb);
    hn::StoreU(hn::Min(hn::Max(sum, vlo), vhi), d, dst + ox0);
  };
  int64_t ox = ox_lo;
  for (; ox + n <= ox_hi; ox += n) block(ox);
  if (ox < ox_hi) block(ox_hi - n);
}
#endif

// Channels [c0, c1), output rows [oy0, oy1) of a 3x3 pad-1 depthwise conv at stride s (1, or 2
// with even w) from rows [r0, r1) of its input: channel c's row iy at src + c * src_plane +
// (iy - r0) * w, with at least 16 readable floats before the first channel and after the last.
// Output row oy of channel c goes to y + c * y_plane + (oy - oy0) * ow.
HWY_ATTR void DepthwiseRows3x3(const float* src, int64_t src_plane, int64_t r0, int64_t r1,
                               int64_t w, int64_t s, int64_t ow, const float* wts,
                               const float* bias, float lo, float hi, float* y, int64_t y_plane,
                               int64_t oy0, int64_t oy1, int64_t c0, int64_t c1) {
  for (int64_t c = c0; c < c1; ++c) {
    const float* plane = src + c * src_plane;
    const float* wk = wts + c * 9;
    const float b = bias != nullptr ? bias[c] : 0.0f;
    for (int64_t oy = oy0; oy < oy1; ++oy) {
      const float* rows[3];
      for (int64_t ky = 0; ky < 3; ++ky) {
        const int64_t iy = s * oy - 1 + ky;
        rows[ky] = iy >= r0 && iy < r1 ? plane + (iy - r0) * w : nullptr;
      }
      float* dst = y + c * y_plane + (oy - oy0) * ow;
      int64_t done = 0;
#if HWY_TARGET != HWY_SCALAR
      ForWidestFit<4>(ow, [&](auto d) HWY_ATTR {
        if (s == 1) {
          DepthwiseRow3x3<1>(d, rows, wk, w, 0, ow, b, lo, hi, dst);
        } else {
          DepthwiseRow3x3<2>(d, rows, wk, w, 0, ow, b, lo, hi, dst);
        }
        done = ow;
      });
#endif
      for (int64_t ox = done; ox < ow; ++ox) {
        float acc = b;
        for (int64_t ky = 0; ky < 3; ++ky) {
          if (rows[ky] == nullptr) continue;
          for (int64_t kx = 0; kx < 3; ++kx) {
            const int64_t ix = s * ox - 1 + kx;
            if (ix >= 0 && ix < w) acc += wk[ky * 3 + kx] * rows[ky][ix];
          }
        }
        dst[ox] = std::min(std::max(acc, lo), hi);
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace tessera::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <vector>

namespace tessera::cpu {

HWY_EXPORT(DepthwiseLinearChannels);
HWY_EXPORT(DepthwiseRows3x3);

namespace {
int64_t floor_div(int64_t a, int64_t b) {
  return (a - ((a % b) + b) % b) / b;
}
}  // namespace

void depthwise_rows_3x3(const float* src, int64_t src_plane, int64_t r0, int64_t r1,
                        const ConvGeometry& g, const float* w, const float* bias, float lo,
                        float hi, float* y, int64_t y_plane, int64_t oy0, int64_t oy1, int64_t c0,
                        int64_t c1) {
  HWY_DYNAMIC_DISPATCH(DepthwiseRows3x3)
  (src, src_plane, r0, r1, g.w, g.sh, g.ow, w, bias, lo, hi, y, y_plane, oy0, oy1, c0, c1);
}

bool depthwise_rows_3x3_applies(const ConvGeometry& g) {
  const bool shape = g.sh == 1
                         ? g.oh == g.h && g.ow == g.w
                         : g.sh == 2 && g.w % 2 == 0 && g.oh == (g.h + 1) / 2 && g.ow == g.w / 2;
  return g.kh == 3 && g.kw == 3 && g.pt == 1 && g.pl == 1 && g.sh == g.sw && shape &&
         g.group == g.c && g.c == g.oc && !g.dilated();
}

bool depthwise_linear_applies(const ConvGeometry& g) {
  const bool window = (g.kh == 3 && g.kw == 3) || (g.kh == 5 && g.kw == 5);
  const bool depthwise = g.group == g.c && g.group == g.oc && g.c > 0;
  const bool pads = g.pt >= 0 && g.pt < g.kh && g.pl >= 0 && g.pl < g.kw;
  if (!window || !depthwise || !pads || g.sh != g.sw || g.h <= 0 || g.w <= 0 || g.dilated()) {
    return false;
  }
  if (g.sh == 1) return g.oh == g.h && g.ow == g.w;
  return g.sh == 2 && g.h % 2 == 0 && g.w % 2 == 0 && g.oh == g.h / 2 && g.ow == g.w / 2;
}

bool depthwise_linear(const float* x, const float* w, const float* bias, const ConvGeometry& g,
                      float lo, float hi, float* y, const UnaryFn* post) {
  if (!depthwise_linear_applies(g)) return false;
  LinearPlan p;
  const int64_t s = g.sh;
  p.phases = s * s;
  p.n = g.oh * g.ow;
  p.plane_floats = (p.n + 15) / 16 * 16;
  for (int64_t kx = 0; kx < g.kw; ++kx) {
    const int64_t dc = floor_div(kx - g.pl, s);
    p.col_lo[kx] = std::max<int64_t>(0, -dc);
    p.col_hi[kx] = g.ow - std::max<int64_t>(0, dc);
  }
  // Tap (ky, kx) reads input row s * oy + ky - pt = s * (oy + dr) + py: phase row py, dr rows
  // away; likewise columns. In a phase plane that is dr * OW + dc floats from j.
  int64_t phase[25] = {}, shift[25] = {}, reach = 0;
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    const int64_t dr = floor_div(ky - g.pt, s), py = ky - g.pt - dr * s;
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      const int64_t dc = floor_div(kx - g.pl, s), px = kx - g.pl - dc * s;
      phase[ky * g.kw + kx] = py * s + px;
      shift[ky * g.kw + kx] = dr * g.ow + dc;
      reach = std::max(reach, std::abs(dr * g.ow + dc));
    }
  }
  // Margins: the farthest reach plus a whole vector (the last, partial vector reads past n).
  p.margin = (reach + 16 + 15) / 16 * 16;
  for (int64_t t = 0; t < g.kh * g.kw; ++t) {
    p.offset[t] = p.margin + phase[t] * (p.plane_floats + p.margin) + shift[t];
  }
  const int64_t floats = p.scratch_floats() + 16;
  // Blocks of channels per task, so a small plane's task is not mostly dispatch.
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, p.n));
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, g.c, grain),
                    [&](const tbb::blocked_range<int64_t>& r) {
                      HWY_DYNAMIC_DISPATCH(DepthwiseLinearChannels)
                      (x, w, bias, &g, &p, lo, hi, y, r.begin(), r.end(),
                       thread_scratch<struct DepthwiseLinearScratch>(floats));
                      if (post != nullptr) {
                        unary_rows(*post, y + r.begin() * p.n, p.n, 1,
                                   (r.end() - r.begin()) * p.n);
                      }
                    });
  return true;
}

}  // namespace tessera::cpu
#endif  // HWY_ONCE
