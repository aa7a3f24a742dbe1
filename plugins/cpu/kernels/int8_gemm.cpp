// The int8 GEMM (kernels/int8.hpp): packing, the micro-kernel and the requantization, one
// Highway source for every target. The AVX3_DL target (Ice Lake and Zen 4 on: AVX-512 with
// VNNI) runs vpdpbusd, 64 byte products per instruction into 16 int32 lanes; every other target
// (AVX2, AVX-512 without VNNI, SSE4, NEON, scalar) widens the bytes to int32 lanes and
// multiplies. Both sum exactly in int32, so every target gives the same bytes as core's
// reference kernels.
#define HWY_WANT_AVX3_DL  // the VNNI target: not compiled by default in this Highway
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/int8_gemm.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/int8.hpp"

#if HWY_TARGET == HWY_AVX3_DL
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_AVX3_DL
// Rows [0, rows) by columns [0, n) of C: 8 rows by 32 columns of sums in 16 zmm accumulators
// (vpdpbusd), requantized in registers and stored as bytes.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) void Int8Tile(
    const int8_t* a, const uint8_t* b, int64_t k4, int64_t rows, int64_t n,
    const Int8Requant* rq, uint8_t* c, int64_t c_row, int64_t c_col) {
  __m512i acc[kI8MR][2];
  for (auto& row : acc) row[0] = row[1] = _mm512_setzero_si512();
  for (int64_t k = 0; k < k4; ++k) {
    const __m512i b0 = _mm512_loadu_si512(b + k * kI8NR * 4);
    const __m512i b1 = _mm512_loadu_si512(b + k * kI8NR * 4 + 64);
    const int8_t* ak = a + k * kI8MR * 4;
    for (int64_t r = 0; r < kI8MR; ++r) {
      int32_t quad;
      std::memcpy(&quad, ak + r * 4, 4);
      const __m512i w = _mm512_set1_epi32(quad);
      acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], b0, w);
      acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], b1, w);
    }
  }
  // The requantization of RequantRow: convert, scale, clamp, round half to even (the default
  // MXCSR mode), add the zero point; the clamped values fit a byte, so narrowing truncates.
  const __m512 lo = _mm512_set1_ps(rq->lo), hi = _mm512_set1_ps(rq->hi);
  const __m512i zero = _mm512_set1_epi32(rq->zero);
  for (int64_t r = 0; r < rows; ++r) {
    const __m512 m = _mm512_set1_ps(rq->multiplier[r]);
    const __m512i off = _mm512_set1_epi32(rq->offset[r]);
    for (int64_t v = 0; v < 2; ++v) {
      const int64_t count = std::min<int64_t>(16, n - 16 * v);
      if (count <= 0) break;
      __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(acc[r][v], off)), m);
      f = _mm512_min_ps(_mm512_max_ps(f, lo), hi);
      const __m128i bytes = _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(f), zero));
      if (c_col == 1) {
        const auto mask = static_cast<__mmask16>((1u << count) - 1u);
        _mm_mask_storeu_epi8(c + r * c_row + 16 * v, mask, bytes);
      } else {
        alignas(16) uint8_t tmp[16];
        _mm_store_si128(reinterpret_cast<__m128i*>(tmp), bytes);
        for (int64_t j = 0; j < count; ++j) c[r * c_row + (16 * v + j) * c_col] = tmp[j];
      }
    }
  }
}

// The one-row product: per block of 64 columns, 4 zmm of sums; x's quad broadcast as vpdpbusd's
// unsigned operand, the weights' quads of 16 columns as its signed one.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) void Int8GemvSums(
    const int8_t* w, const uint8_t* x, int64_t k4, int64_t n16, int32_t* acc) {
  for (int64_t j = 0; j < n16; j += 64) {
    const int64_t vectors = std::min<int64_t>(4, (n16 - j) / 16);
    __m512i c[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                    _mm512_setzero_si512()};
    for (int64_t k = 0; k < k4; ++k) {
      int32_t quad;
      std::memcpy(&quad, x + k * 4, 4);
      const __m512i xq = _mm512_set1_epi32(quad);
      const int8_t* wk = w + (k * n16 + j) * 4;
      for (int64_t v = 0; v < vectors; ++v) {
        c[v] = _mm512_dpbusd_epi32(c[v], xq, _mm512_loadu_si512(wk + v * 64));
      }
    }
    for (int64_t v = 0; v < vectors; ++v) _mm512_storeu_si512(acc + j + v * 16, c[v]);
  }
}

const char* KernelName() { return "vnni"; }
#else
// The widening path: per column vector, each lane's 4 bytes become 4 int32 values, multiplied by
// the row's 4 weights and summed.
void Int8Sums(const int8_t* a, const uint8_t* b, int64_t k4, int32_t* acc) {
  const hn::ScalableTag<int32_t> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto mask = hn::Set(d, 0xFF);
  for (int64_t j = 0; j < kI8NR; j += lanes) {
    auto c0 = hn::Zero(d), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    for (int64_t k = 0; k < k4; ++k) {
      // The panel's 4-byte groups read as int32 lanes (Highway's loads are byte copies).
      const auto q = hn::LoadU(d, reinterpret_cast<const int32_t*>(b + (k * kI8NR + j) * 4));
      const auto x0 = hn::And(q, mask);
      const auto x1 = hn::And(hn::ShiftRight<8>(q), mask);
      const auto x2 = hn::And(hn::ShiftRight<16>(q), mask);
      const auto x3 = hn::And(hn::ShiftRight<24>(q), mask);
      const int8_t* ak = a + k * kI8MR * 4;
      const auto dot = [&](int64_t r) {
        const int8_t* w = ak + r * 4;
        return hn::Add(hn::Add(hn::Mul(x0, hn::Set(d, w[0])), hn::Mul(x1, hn::Set(d, w[1]))),
                       hn::Add(hn::Mul(x2, hn::Set(d, w[2])), hn::Mul(x3, hn::Set(d, w[3]))));
      };
      c0 = hn::Add(c0, dot(0));
      c1 = hn::Add(c1, dot(1));
      c2 = hn::Add(c2, dot(2));
      c3 = hn::Add(c3, dot(3));
      c4 = hn::Add(c4, dot(4));
      c5 = hn::Add(c5, dot(5));
      c6 = hn::Add(c6, dot(6));
      c7 = hn::Add(c7, dot(7));
    }
    hn::StoreU(c0, d, acc + 0 * kI8NR + j);
    hn::StoreU(c1, d, acc + 1 * kI8NR + j);
    hn::StoreU(c2, d, acc + 2 * kI8NR + j);
    hn::StoreU(c3, d, acc + 3 * kI8NR + j);
    hn::StoreU(c4, d, acc + 4 * kI8NR + j);
    hn::StoreU(c5, d, acc + 5 * kI8NR + j);
    hn::StoreU(c6, d, acc + 6 * kI8NR + j);
    hn::StoreU(c7, d, acc + 7 * kI8NR + j);
  }
}

// The one-row product on the widening path: per column, the 4-byte groups widened to int32.
void Int8GemvSums(const int8_t* w, const uint8_t* x, int64_t k4, int64_t n16, int32_t* acc) {
  std::fill(acc, acc + n16, 0);
  for (int64_t k = 0; k < k4; ++k) {
    const uint8_t* xk = x + k * 4;
    const int8_t* wk = w + k * n16 * 4;
    for (int64_t j = 0; j < n16; ++j) {
      acc[j] += xk[0] * wk[j * 4] + xk[1] * wk[j * 4 + 1] + xk[2] * wk[j * 4 + 2] +
                xk[3] * wk[j * 4 + 3];
    }
  }
}

const char* KernelName() { return "widening"; }
#endif

// The scalar form of the requantization, for row tails: the same float operations as the
// vectors and as core's Requant::apply.
int32_t RequantOne(int32_t acc, float multiplier, const Int8Requant& rq) {
  const float v = std::min(std::max(static_cast<float>(acc) * multiplier, rq.lo), rq.hi);
  return static_cast<int32_t>(std::nearbyint(v)) + rq.zero;
}

template <typename T>
void RequantRowT(const int32_t* acc, int64_t n, float multiplier, int32_t offset,
                 const Int8Requant& rq, T* out) {
  const hn::ScalableTag<int32_t> d;
  const hn::Rebind<float, decltype(d)> df;
  const hn::Rebind<T, decltype(d)> dq;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto m = hn::Set(df, multiplier), lo = hn::Set(df, rq.lo), hi = hn::Set(df, rq.hi);
  const auto off = hn::Set(d, offset), zero = hn::Set(d, rq.zero);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto f = hn::Mul(hn::ConvertTo(df, hn::Add(hn::LoadU(d, acc + i), off)), m);
    const auto r = hn::Add(hn::NearestInt(hn::Min(hn::Max(f, lo), hi)), zero);
    hn::StoreU(hn::DemoteTo(dq, r), dq, out + i);
  }
  for (; i < n; ++i) out[i] = static_cast<T>(RequantOne(acc[i] + offset, multiplier, rq));
}

void RequantRow(const int32_t* acc, int64_t n, float multiplier, int32_t offset,
                const Int8Requant* rq, uint8_t* out) {
  if (rq->is_signed) {
    RequantRowT(acc, n, multiplier, offset, *rq, reinterpret_cast<int8_t*>(out));
  } else {
    RequantRowT(acc, n, multiplier, offset, *rq, out);
  }
}

#if HWY_TARGET != HWY_AVX3_DL
// Rows [0, rows) by columns [0, n) of C: the sums, then each row requantized.
void Int8Tile(const int8_t* a, const uint8_t* b, int64_t k4, int64_t rows, int64_t n,
              const Int8Requant* rq, uint8_t* c, int64_t c_row, int64_t c_col) {
  alignas(64) int32_t acc[kI8MR * kI8NR];
  Int8Sums(a, b, k4, acc);
  uint8_t row[kI8NR];
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t* dst = c_col == 1 ? c + r * c_row : row;
    RequantRow(acc + r * kI8NR, n, rq->multiplier[r], rq->offset[r], rq, dst);
    if (c_col != 1) {
      for (int64_t j = 0; j < n; ++j) c[r * c_row + j * c_col] = row[j];
    }
  }
}
#endif

// Four rows of kI8NR bytes into one group of the panel: byte j of row t at j * 4 + t.
void InterleaveRows(const uint8_t* const* rows, int64_t count, uint8_t* panel) {
  const hn::CappedTag<uint8_t, 16> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t r = 0; r < count; r += 4, panel += kI8NR * 4) {
    for (int64_t j = 0; j < kI8NR; j += lanes) {
      hn::StoreInterleaved4(hn::LoadU(d, rows[r] + j), hn::LoadU(d, rows[r + 1] + j),
                            hn::LoadU(d, rows[r + 2] + j), hn::LoadU(d, rows[r + 3] + j), d,
                            panel + j * 4);
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace tessera::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessera::cpu {

HWY_EXPORT(Int8Tile);
HWY_EXPORT(RequantRow);
HWY_EXPORT(InterleaveRows);
HWY_EXPORT(KernelName);
HWY_EXPORT(Int8GemvSums);

void pack_int8_a(const int8_t* a, int64_t m, int64_t k, int64_t row_stride, int64_t col_stride,
                 Int8PackedA* out) {
  out->m = m;
  out->k = k;
  out->k4 = (k + 3) / 4;
  const int64_t panels = (m + kI8MR - 1) / kI8MR;
  out->data.assign(static_cast<size_t>(panels * out->k4 * kI8MR * 4), 0);
  out->row_sums.assign(static_cast<size_t>(m), 0);
  for (int64_t i = 0; i < m; ++i) {
    int8_t* panel = out->data.data() + (i / kI8MR) * out->k4 * kI8MR * 4;
    for (int64_t kk = 0; kk < k; ++kk) {
      const int8_t w = a[i * row_stride + kk * col_stride];
      panel[(kk / 4) * kI8MR * 4 + (i % kI8MR) * 4 + kk % 4] = w;
      out->row_sums[static_cast<size_t>(i)] += w;
    }
  }
}

void interleave_int8_rows(const uint8_t* const* rows, int64_t count, uint8_t* panel) {
  HWY_DYNAMIC_DISPATCH(InterleaveRows)(rows, count, panel);
}

void int8_requantize_row(const int32_t* acc, int64_t n, float multiplier, int32_t offset,
                         const Int8Requant& rq, uint8_t* out) {
  HWY_DYNAMIC_DISPATCH(RequantRow)(acc, n, multiplier, offset, &rq, out);
}

void int8_gemm_tile(const Int8PackedA& a, int64_t m0, int64_t m1, const uint8_t* b_panel, int64_t n,
                    const Int8Requant& rq, uint8_t* c, int64_t c_row, int64_t c_col) {
  Int8Requant rows = rq;
  rows.multiplier += m0;
  rows.offset += m0;
  HWY_DYNAMIC_DISPATCH(Int8Tile)(a.data.data() + (m0 / kI8MR) * a.k4 * kI8MR * 4, b_panel, a.k4,
                                 m1 - m0, n, &rows, c + m0 * c_row, c_row, c_col);
}

void pack_int8_gemv(const int8_t* w, int64_t k, int64_t n, Int8PackedGemv* out) {
  out->k = k;
  out->n = n;
  out->k4 = (k + 3) / 4;
  out->n16 = (n + 15) / 16 * 16;
  out->data.assign(static_cast<size_t>(out->k4 * out->n16 * 4), 0);
  out->column_sums.assign(static_cast<size_t>(n), 0);
  for (int64_t kk = 0; kk < k; ++kk) {
    for (int64_t j = 0; j < n; ++j) {
      const int8_t v = w[kk * n + j];
      out->data[static_cast<size_t>(((kk / 4) * out->n16 + j) * 4 + kk % 4)] = v;
      out->column_sums[static_cast<size_t>(j)] += v;
    }
  }
}

void int8_gemv(const Int8PackedGemv& w, const uint8_t* x, const Int8Requant& rq, uint8_t* y) {
  // x padded to whole groups of 4 (the padded weights are 0).
  std::vector<uint8_t> xs(static_cast<size_t>(w.k4 * 4), 0);
  std::copy(x, x + w.k, xs.begin());
  std::vector<int32_t> acc(static_cast<size_t>(w.n16));
  HWY_DYNAMIC_DISPATCH(Int8GemvSums)(w.data.data(), xs.data(), w.k4, w.n16, acc.data());
  // Per column its own multiplier: RequantRow's scalar form.
  for (int64_t j = 0; j < w.n; ++j) {
    const float v = std::min(std::max(static_cast<float>(acc[static_cast<size_t>(j)] + rq.offset[j]) *
                                          rq.multiplier[j], rq.lo), rq.hi);
    const int32_t q = static_cast<int32_t>(std::nearbyint(v)) + rq.zero;
    y[j] = static_cast<uint8_t>(q);
  }
}

std::string int8_kernel_name() { return HWY_DYNAMIC_DISPATCH(KernelName)(); }

}  // namespace tessera::cpu
#endif  // HWY_ONCE
