// The int8 depthwise conv kernel (kernels/int8.hpp): per output row, one widening
// multiply-add pass over a contiguous phase row per tap (int32 lanes), then the row's
// requantization. The phases (padded, strided input split by column and row parity) make every
// tap's row contiguous, so stride 2 needs no gathers.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/int8_depthwise.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <vector>

#include "kernels/int8.hpp"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// acc[i] = sum over taps t of w[t] * src[t][i], for i < n: each vector of sums stays in a
// register through every tap.
void SumTaps(const uint8_t* const* src, const int32_t* w, int64_t taps, int64_t n, int32_t* acc) {
  const hn::ScalableTag<int32_t> d;
  const hn::Rebind<uint8_t, decltype(d)> d8;
  const hn::Rebind<uint32_t, decltype(d)> du;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    auto sum = hn::Zero(d);
    for (int64_t t = 0; t < taps; ++t) {
      const auto x = hn::BitCast(d, hn::PromoteTo(du, hn::LoadU(d8, src[t] + i)));
      sum = hn::Add(sum, hn::Mul(x, hn::Set(d, w[t])));
    }
    hn::StoreU(sum, d, acc + i);
  }
  for (; i < n; ++i) {
    int32_t sum = 0;
    for (int64_t t = 0; t < taps; ++t) sum += w[t] * static_cast<int32_t>(src[t][i]);
    acc[i] = sum;
  }
}

// The plane as one flat run of oh * wq sums (columns ox >= ow of each row are computed and
// dropped), in chunks that keep the sums in L1. The zero point's share, zero * sum(w), moves into
// the offset, so the taps multiply the bytes as they are.
void DepthwisePlane(const Int8DepthwisePlane* pp, const Int8Requant* rq, int32_t* acc,
                    uint8_t* y) {
  const Int8DepthwisePlane& p = *pp;
  const int64_t taps = p.kh * p.kw;
  // Windows up to 8x8 keep their tap tables on the stack: a plane of a 7x7 map is ~50 outputs,
  // and heap tables per plane cost as much as its sums.
  constexpr int64_t kStackTaps = 64;
  const uint8_t* stack_ptrs[2 * kStackTaps];
  int32_t stack_w[kStackTaps];
  std::vector<const uint8_t*> heap_ptrs(taps > kStackTaps ? static_cast<size_t>(2 * taps) : 0);
  std::vector<int32_t> heap_w(taps > kStackTaps ? static_cast<size_t>(taps) : 0);
  const uint8_t** base = taps > kStackTaps ? heap_ptrs.data() : stack_ptrs;
  const uint8_t** src = base + taps;
  int32_t* w = taps > kStackTaps ? heap_w.data() : stack_w;
  int32_t weight_sum = 0;
  for (int64_t ky = 0; ky < p.kh; ++ky) {
    for (int64_t kx = 0; kx < p.kw; ++kx) {
      const int64_t t = ky * p.kw + kx;
      const uint8_t* phase = p.phases + ((ky % p.s) * p.s + (kx % p.s)) * p.plane;
      base[t] = phase + (ky / p.s) * p.dil_h * p.wq + (kx / p.s) * p.dil_w;
      w[t] = p.weights[t];
      weight_sum += w[t];
    }
  }
  const int32_t offset = p.offset - p.zero * weight_sum;
  const int64_t total = p.oh * p.wq;
  uint8_t bytes[kInt8DepthwiseChunk + kInt8DepthwiseRound];
  for (int64_t j0 = 0; j0 < total; j0 += kInt8DepthwiseChunk) {
    const int64_t n = std::min(kInt8DepthwiseChunk, total - j0);
    // Whole vectors past the end (small planes are mostly tail otherwise): the phase buffer's
    // slack holds what the extra lanes read, and their bytes are not copied out.
    const int64_t n_whole = (n + kInt8DepthwiseRound - 1) / kInt8DepthwiseRound * kInt8DepthwiseRound;
    for (int64_t t = 0; t < taps; ++t) src[t] = base[t] + j0;
    SumTaps(src, w, taps, n_whole, acc);
    int8_requantize_row(acc, n_whole, p.multiplier, offset, *rq, bytes);
    // Output row oy holds flat positions oy * wq .. oy * wq + ow.
    for (int64_t oy = j0 / p.wq; oy * p.wq < j0 + n; ++oy) {
      const int64_t a = std::max(oy * p.wq, j0), b = std::min(oy * p.wq + p.ow, j0 + n);
      if (b > a) std::copy(bytes + (a - j0), bytes + (b - j0), y + oy * p.ow + (a - oy * p.wq));
    }
  }
}

void CopyFlip(const uint8_t* src, int64_t stride, int64_t n, uint8_t flip, uint8_t* dst) {
  if (stride == 1 && flip == 0) {
    std::copy(src, src + n, dst);
    return;
  }
  // 16 bytes at a time: the rows are short (7 to 113 bytes), and a 64-byte vector would leave
  // most of them to the scalar loop. A row's last vector overlaps the one before (writing the
  // same bytes again) instead of a scalar tail.
  int64_t j = 0;
  if (stride == 1) {
    const hn::CappedTag<uint8_t, 16> d;
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
    const auto f = hn::Set(d, flip);
    if (n >= lanes) {
      for (; j + lanes <= n; j += lanes) {
        hn::StoreU(hn::Xor(hn::LoadU(d, src + j), f), d, dst + j);
      }
      if (j < n) hn::StoreU(hn::Xor(hn::LoadU(d, src + n - lanes), f), d, dst + n - lanes);
      return;
    }
  } else if (stride == 2) {
    // Pairs of bytes as 16-bit lanes: the low byte is the even one. A vector at j reads the odd
    // byte after element j + lanes - 1, so vectors end before the last element, which the scalar
    // loop copies: nothing past it is read.
    const hn::CappedTag<uint16_t, 16> d16;
    const hn::Rebind<int16_t, decltype(d16)> di16;
    const hn::Rebind<uint8_t, decltype(d16)> d8;
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(d16));
    const auto low = hn::Set(d16, 0xFF);
    const auto f = hn::Set(d8, flip);
    const auto pairs_at = [&](int64_t at) {
      const auto pairs = hn::LoadU(d16, reinterpret_cast<const uint16_t*>(src + 2 * at));
      hn::StoreU(hn::Xor(hn::DemoteTo(d8, hn::BitCast(di16, hn::And(pairs, low))), f), d8,
                 dst + at);
    };
    if (n > lanes) {
      for (; j + lanes < n; j += lanes) pairs_at(j);
      if (j < n - 1) pairs_at(n - 1 - lanes);
      j = n - 1;
    }
  }
  for (; j < n; ++j) dst[j] = static_cast<uint8_t>(src[j * stride] ^ flip);
}

void CopyFlipRows(const uint8_t* src, int64_t src_pitch, int64_t rows, int64_t stride, int64_t n,
                  uint8_t flip, uint8_t* dst, int64_t dst_pitch) {
  for (int64_t r = 0; r < rows; ++r) {
    CopyFlip(src + r * src_pitch, stride, n, flip, dst + r * dst_pitch);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace tessera::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessera::cpu {

HWY_EXPORT(DepthwisePlane);
HWY_EXPORT(CopyFlip);
HWY_EXPORT(CopyFlipRows);

void int8_depthwise_plane(const Int8DepthwisePlane& p, const Int8Requant& rq, int32_t* acc_row,
                          uint8_t* y) {
  HWY_DYNAMIC_DISPATCH(DepthwisePlane)(&p, &rq, acc_row, y);
}

void int8_copy_flip(const uint8_t* src, int64_t stride, int64_t n, uint8_t flip, uint8_t* dst) {
  HWY_DYNAMIC_DISPATCH(CopyFlip)(src, stride, n, flip, dst);
}

void int8_copy_flip_rows(const uint8_t* src, int64_t src_pitch, int64_t rows, int64_t stride,
                         int64_t n, uint8_t flip, uint8_t* dst, int64_t dst_pitch) {
  HWY_DYNAMIC_DISPATCH(CopyFlipRows)(src, src_pitch, rows, stride, n, flip, dst, dst_pitch);
}

}  // namespace tessera::cpu
#endif  // HWY_ONCE
