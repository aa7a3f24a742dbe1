// Depthwise convolution on blocks of channels held channels-last in scratch: a block of one
// vector's worth of channels is transposed into a zero-padded [rows][cols][lanes] tile, every
// tap is then one vector load and one FMA for the whole block, and the result is transposed
// back into the channels' NCHW planes.
//
// The per-plane kernels (depthwise.cpp) vectorise along a row, so a 7x7 or 14x14 plane leaves
// lanes idle and pays its set-up (weights, masks, scratch copy) once per channel: mobilenet_v3's
// 5x5 depthwise convs on 576 channels of 7x7 took 1.8x ONNX Runtime's NCHWc kernel. Here all
// lanes carry a channel whatever the plane's size, padding needs no masks, any stride and
// dilation is only an address, and the set-up is paid once per block. Large planes are taken in
// bands of output rows so the tile stays in L2.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/depthwise_blocked.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/elementwise.hpp"
#include "kernels/kernels.hpp"

#ifndef TESSERA_CPU_DEPTHWISE_BLOCKED_PLAN
#define TESSERA_CPU_DEPTHWISE_BLOCKED_PLAN
namespace tessera::cpu {

// One call's blocking, shared by its tasks.
struct BlockedPlan {
  int64_t lanes = 0;       // channels per block (the vector width, at most 16)
  int64_t band = 0;        // output rows per task
  int64_t tile_cols = 0;   // padded input columns a band reads
  int64_t tile_rows = 0;   // padded input rows a band reads
  int64_t out_pixels = 0;  // band * OW
  int64_t tile_floats() const { return tile_rows * tile_cols * lanes; }
  int64_t out_floats() const { return out_pixels * lanes; }
};

}  // namespace tessera::cpu
#endif

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

HWY_ATTR int64_t BlockedLanes() {
  return std::min<int64_t>(16, static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>())));
}

// Output pixels [ox, ox + N) of one output row: acc[i] += w[t] * tile[input of pixel i, tap t].
// KH / KW of 0 take the window's size at run time.
template <int N, int KH, int KW, class D>
HWY_ATTR void BlockedPixels(D d, const float* row0, int64_t row_pitch, int64_t col_pitch,
                            int64_t dil_h, int64_t dil_w, int64_t kh_rt, int64_t kw_rt,
                            const float* wpk, hn::Vec<D>* acc) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t kh = KH ? KH : kh_rt, kw = KW ? KW : kw_rt;
  for (int64_t ky = 0; ky < kh; ++ky) {
    const float* r = row0 + ky * dil_h * row_pitch;
    for (int64_t kx = 0; kx < kw; ++kx) {
      const auto wv = hn::LoadU(d, wpk + (ky * kw + kx) * lanes);
      const float* p = r + kx * dil_w * lanes;
      for (int i = 0; i < N; ++i) acc[i] = hn::MulAdd(wv, hn::LoadU(d, p + i * col_pitch), acc[i]);
    }
  }
}

template <int KH, int KW, class D>
HWY_ATTR void BlockedRow(D d, const float* tile, const ConvGeometry& g, int64_t tile_cols,
                         int64_t row, const float* wpk, const float* bias, float lo, float hi,
                         float* out) {
  using V = hn::Vec<D>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t row_pitch = tile_cols * lanes, col_pitch = g.sw * lanes;
  const float* row0 = tile + row * g.sh * row_pitch;
  const V vb = hn::LoadU(d, bias), vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  auto finish = [&](V v, int64_t ox)
                    HWY_ATTR { hn::StoreU(hn::Min(hn::Max(v, vlo), vhi), d, out + ox * lanes); };
  // Four pixels at a time: four independent FMA chains, each weight vector loaded once for four
  // FMAs. A ragged row ends with a group shifted back over pixels already done (same values):
  // one pixel alone is a chain of taps dependent FMAs, which had cost 7-wide rows half their
  // time.
  auto group = [&](auto n, int64_t ox) HWY_ATTR {
    constexpr int N = decltype(n)::value;
    V acc[N];
    for (int i = 0; i < N; ++i) acc[i] = vb;
    BlockedPixels<N, KH, KW>(d, row0 + ox * col_pitch, row_pitch, col_pitch, g.dil_h, g.dil_w, g.kh,
                             g.kw, wpk, acc);
    for (int i = 0; i < N; ++i) finish(acc[i], ox + i);
  };
  if (g.ow < 4) {
    if (g.ow == 1) group(std::integral_constant<int, 1>(), 0);
    if (g.ow == 2) group(std::integral_constant<int, 2>(), 0);
    if (g.ow == 3) group(std::integral_constant<int, 3>(), 0);
    return;
  }
  for (int64_t ox = 0;; ox += 4) {
    ox = std::min(ox, g.ow - 4);
    group(std::integral_constant<int, 4>(), ox);
    if (ox + 4 >= g.ow) break;
  }
}

// One task: channels [c0, c0 + cb) (cb <= lanes), output rows [oy0, oy1).
HWY_ATTR void DepthwiseBlockedTask(const float* x, const float* w, const float* bias,
                                   const ConvGeometry* gp, const BlockedPlan* pp, float lo,
                                   float hi, float* y, int64_t c0, int64_t oy0, int64_t oy1,
                                   float* scratch) {
  const ConvGeometry& g = *gp;
  const BlockedPlan& p = *pp;
  const hn::CappedTag<float, 16> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t cb = std::min(lanes, g.c - c0), taps = g.kh * g.kw;
  const int64_t in_plane = g.h * g.w, out_plane = g.oh * g.ow;
  // Every part of the scratch starts on a 64-byte line (their sizes are whole vectors): the
  // tile's 16-float loads split across two lines otherwise, which Intel cores pay for twice.
  float* tile = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(scratch) + 63) &
                                         ~static_cast<uintptr_t>(63));
  float* wpk = tile + p.tile_floats();
  float* vbias = wpk + taps * lanes;
  float* out = vbias + lanes;
  // Lanes past cb stay zero: their channels do not exist, and zeros keep them finite.
  if (cb < lanes) std::fill(tile, out + p.out_floats(), 0.0f);
  transpose_2d(w + c0 * taps, taps, wpk, lanes, cb, taps);
  for (int64_t l = 0; l < cb; ++l) vbias[l] = bias != nullptr ? bias[c0 + l] : 0.0f;
  // The band's padded input: tile row r is input row iy0 + r, tile column q input column q - pl.
  const int64_t rows = (oy1 - oy0 - 1) * g.sh + g.extent_h();
  const int64_t iy0 = oy0 * g.sh - g.pt;
  const int64_t left = std::min(g.pl, p.tile_cols);
  const int64_t inside = std::max<int64_t>(0, std::min(g.w, p.tile_cols - g.pl));
  for (int64_t r = 0; r < rows; ++r) {
    float* dst = tile + r * p.tile_cols * lanes;
    const int64_t iy = iy0 + r;
    if (iy < 0 || iy >= g.h || inside == 0) {
      std::fill(dst, dst + p.tile_cols * lanes, 0.0f);
      continue;
    }
    std::fill(dst, dst + left * lanes, 0.0f);
    transpose_2d(x + c0 * in_plane + iy * g.w, in_plane, dst + left * lanes, lanes, cb, inside);
    std::fill(dst + (left + inside) * lanes, dst + p.tile_cols * lanes, 0.0f);
  }
  for (int64_t oy = oy0; oy < oy1; ++oy) {
    float* o = out + (oy - oy0) * g.ow * lanes;
    if (g.kh == 3 && g.kw == 3) {
      BlockedRow<3, 3>(d, tile, g, p.tile_cols, oy - oy0, wpk, vbias, lo, hi, o);
    } else if (g.kh == 5 && g.kw == 5) {
      BlockedRow<5, 5>(d, tile, g, p.tile_cols, oy - oy0, wpk, vbias, lo, hi, o);
    } else {
      BlockedRow<0, 0>(d, tile, g, p.tile_cols, oy - oy0, wpk, vbias, lo, hi, o);
    }
  }
  // [pixel][lane] -> the channels' planes, rows oy0..oy1 contiguous in each.
  transpose_2d(out, lanes, y + c0 * out_plane + oy0 * g.ow, out_plane, (oy1 - oy0) * g.ow, cb);
}

}  // namespace HWY_NAMESPACE
}  // namespace tessera::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace tessera::cpu {

HWY_EXPORT(BlockedLanes);
HWY_EXPORT(DepthwiseBlockedTask);

bool depthwise_blocked_applies(const ConvGeometry& g) {
  const bool depthwise = g.group == g.c && g.group == g.oc && g.c > 0;
  return depthwise && g.oh > 0 && g.ow > 0 && g.kh > 0 && g.kw > 0 && g.sh > 0 && g.sw > 0 &&
         g.pt >= 0 && g.pl >= 0 && g.dil_h > 0 && g.dil_w > 0 &&
         HWY_DYNAMIC_DISPATCH(BlockedLanes)() >= 4;
}

bool depthwise_prefers_blocked(const ConvGeometry& g) {
  if (!depthwise_blocked_applies(g)) return false;
  return g.kh * g.kw >= 25 || (g.dilated() && (g.sh != 1 || g.sw != 1));
}

bool depthwise_blocked(const float* x, const float* w, const float* bias, const ConvGeometry& g,
                       float lo, float hi, float* y, const UnaryFn* post) {
  if (!depthwise_blocked_applies(g)) return false;
  BlockedPlan p;
  p.lanes = HWY_DYNAMIC_DISPATCH(BlockedLanes)();
  p.tile_cols = (g.ow - 1) * g.sw + g.extent_w();
  // Bands of output rows whose tile stays near 192 KiB, in L2 (a plane up to 28x28 is one band):
  // the rows a band shares with the next are transposed twice, which 64 KiB bands had made a
  // third of a 112x112 plane's time.
  const int64_t row_floats = p.tile_cols * p.lanes;
  const int64_t budget_rows = std::max<int64_t>(g.extent_h(), (48 << 10) / row_floats);
  const int64_t tallest = std::clamp<int64_t>((budget_rows - g.extent_h()) / g.sh + 1, 1, g.oh);
  const int64_t blocks = (g.c + p.lanes - 1) / p.lanes;
  // At least four tasks per thread where bands of 4 rows or more allow it, in bands of equal
  // height: 72 channels of 28x28 at 2 threads had run as five blocks, the last one half empty.
  const int64_t threads = tbb::this_task_arena::max_concurrency();
  const int64_t wanted = (4 * threads + blocks - 1) / blocks;
  const int64_t fewest = (g.oh + tallest - 1) / tallest;
  const int64_t bands_cap = std::max(fewest, (g.oh + 3) / 4);
  const int64_t target = std::clamp(wanted, fewest, bands_cap);
  p.band = (g.oh + target - 1) / target;
  const int64_t bands = (g.oh + p.band - 1) / p.band;
  p.tile_rows = (p.band - 1) * g.sh + g.extent_h();
  p.out_pixels = p.band * g.ow;
  // A window far wider than any network's (a crafted model's huge dilation or pads) would make
  // even a one-row band's tile hundreds of MiB per thread: the per-plane kernels take those.
  constexpr int64_t kMostFloats = int64_t{1} << 24;  // 64 MiB for the whole scratch
  if (p.tile_cols > kMostFloats / p.lanes || p.tile_rows > kMostFloats / (p.tile_cols * p.lanes) ||
      g.kh * g.kw > kMostFloats / p.lanes || p.out_pixels > kMostFloats / p.lanes) {
    return false;
  }
  const int64_t floats = p.tile_floats() + (g.kh * g.kw + 1) * p.lanes + p.out_floats() + 16;
  if (floats > kMostFloats) return false;
  const int64_t out_plane = g.oh * g.ow;
  tbb::parallel_for(int64_t{0}, blocks * bands, [&](int64_t task) {
    const int64_t block = task / bands, band = task % bands;
    const int64_t c0 = block * p.lanes, oy0 = band * p.band;
    const int64_t oy1 = std::min(g.oh, oy0 + p.band);
    HWY_DYNAMIC_DISPATCH(DepthwiseBlockedTask)
    (x, w, bias, &g, &p, lo, hi, y, c0, oy0, oy1,
     thread_scratch<struct DepthwiseBlockedScratch>(floats));
    if (post != nullptr) {
      const int64_t cb = std::min(p.lanes, g.c - c0);
      unary_rows(*post, y + c0 * out_plane + oy0 * g.ow, out_plane, cb, (oy1 - oy0) * g.ow);
    }
  });
  return true;
}

}  // namespace tessera::cpu
#endif  // HWY_ONCE
