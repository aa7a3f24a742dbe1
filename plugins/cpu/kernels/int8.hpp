// The cpu plugin's int8 kernels (int8_gemm.cpp): a u8 x s8 GEMM with int32 sums and the
// requantization of core's int8 units (core/ops/util/quantized_unit.hpp), bit-exact to core's
// reference kernels. Activations are unsigned bytes (int8 ones are shifted by 128 when packed, and
// the shift is taken out with the weights' row sums); weights are signed bytes. The micro-kernel
// is AVX-512 VNNI's vpdpbusd where the host has it (Highway's AVX3_DL target), and elsewhere the
// widening path: bytes widened to int32 lanes, multiplied and added.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::cpu {

// Register tile of the int8 micro-kernel: kI8MR rows (output channels) by kI8NR columns
// (pixels), K taken 4 at a time (vpdpbusd's group).
constexpr int64_t kI8MR = 8;
constexpr int64_t kI8NR = 32;

// Weights [m][k] packed in panels of kI8MR rows laid out [k / 4][row][4], K zero-padded to a
// multiple of 4, rows zero-padded to the panel; row_sums[i] is the sum of row i's weights.
struct Int8PackedA {
  int64_t m = 0, k = 0, k4 = 0;  // k4: groups of 4 along K
  std::vector<int8_t> data;
  std::vector<int32_t> row_sums;
};
// Packs A given by element (i, k) at a[i * row_stride + k * col_stride].
void pack_int8_a(const int8_t* a, int64_t m, int64_t k, int64_t row_stride, int64_t col_stride,
                 Int8PackedA* out);

// Bytes of one packed B panel: k4 groups of kI8NR columns of 4 bytes.
inline int64_t int8_b_panel_bytes(int64_t k4) { return k4 * kI8NR * 4; }
// Packs rows [k0, k0 + count) of B (rows of kI8NR bytes, row r at rows[r], already unsigned) into
// the panel's groups: panel[(k / 4) * kI8NR * 4 + j * 4 + k % 4] = rows[k][j]. count is a
// multiple of 4 and k0 too; rows past K are zero rows the caller provides.
void interleave_int8_rows(const uint8_t* const* rows, int64_t count, uint8_t* panel);

// How a tile's int32 sums become output bytes, per row: y = nearbyint(clamp(float(acc +
// offset[i]) * multiplier[i], lo, hi)) + zero, stored as int8 (is_signed) or uint8.
struct Int8Requant {
  const float* multiplier = nullptr;
  const int32_t* offset = nullptr;  // bias - (activation zero point) * row sum
  float lo = 0.0f, hi = 0.0f;
  int32_t zero = 0;
  bool is_signed = false;
};

// C rows [m0, m1) (m1 - m0 <= kI8MR, m0 a multiple of kI8MR), columns [0, n) with n <= kI8NR, from
// packed A and one packed B panel; element (i, j) goes to c[i * c_row + j * c_col].
void int8_gemm_tile(const Int8PackedA& a, int64_t m0, int64_t m1, const uint8_t* b_panel, int64_t n,
                    const Int8Requant& rq, uint8_t* c, int64_t c_row, int64_t c_col);

// A one-row product (a fully connected layer at batch 1): y[j] = requant(sum_k x[k] * w[k][j]),
// with the weights packed once as [k / 4][column][4] (columns padded to 16) and x's bytes
// already unsigned (int8_gemm.cpp). rq's pointers index columns.
struct Int8PackedGemv {
  int64_t k = 0, n = 0, k4 = 0, n16 = 0;
  std::vector<int8_t> data;
  std::vector<int32_t> column_sums;
};
// Packs w [k][n] (row-major).
void pack_int8_gemv(const int8_t* w, int64_t k, int64_t n, Int8PackedGemv* out);
// x: k unsigned bytes; y: n bytes.
void int8_gemv(const Int8PackedGemv& w, const uint8_t* x, const Int8Requant& rq, uint8_t* y);

// Requantizes n int32 sums, all with one multiplier and offset, into bytes.
void int8_requantize_row(const int32_t* acc, int64_t n, float multiplier, int32_t offset,
                         const Int8Requant& rq, uint8_t* out);

// Name of the micro-kernel the dispatcher picks: "vnni" or "widening".
std::string int8_kernel_name();

}  // namespace tessera::cpu

namespace tessera::cpu {

// The int8 Add unit's arithmetic (core's tessera_q_linear_add.cpp), n elements of a and b (each
// int8 or uint8) into y: nearbyint(clamp((float(a - za) * sa + float(b - zb) * sb) / sy,
// lo - zy, hi - zy)) + zy (int8_elementwise.cpp).
struct Int8AddParams {
  float sa = 1, sb = 1, sy = 1;
  int32_t za = 0, zb = 0, zy = 0;
  int32_t lo = 0, hi = 255;
  bool a_signed = false, b_signed = false, y_signed = false;
  bool mul = false;       // the Mul unit: float(a - za) * sa * (float(b - zb) * sb)
  bool b_scalar = false;  // b is one element for all n (a per-channel broadcast, plane by plane)
};
void int8_add(const uint8_t* a, const uint8_t* b, int64_t n, const Int8AddParams& p, uint8_t* y);
// QuantizeLinear (core's quantize_linear.cpp): y = saturate(nearbyint(x / scale) + zero) into
// [lo, hi] as int8 (is_signed) or uint8, NaN to lo (int8_elementwise.cpp).
void int8_quantize(const float* x, int64_t n, float scale, int32_t zero, int32_t lo, int32_t hi,
                   bool is_signed, uint8_t* y);

}  // namespace tessera::cpu

namespace tessera::cpu {

// One depthwise int8 plane (int8_depthwise.cpp) from its phase planes (kernels of stride s read
// phase (ky % s, kx % s) at row oy + (ky / s) * dil_h and column ox + (kx / s) * dil_w; stride 1
// has one phase, the padded plane): bytes unsigned, `zero` the zero point's byte, phases of
// `plane` bytes and pitch wq. Sums w * (x - zero) in int32 and requantizes each row with
// `multiplier` and `offset` (the bias).
struct Int8DepthwisePlane {
  const uint8_t* phases = nullptr;
  int64_t s = 1, wq = 0, plane = 0;
  int64_t kh = 1, kw = 1, dil_h = 1, dil_w = 1, oh = 0, ow = 0;
  const int8_t* weights = nullptr;  // kh * kw
  int32_t zero = 0;
  float multiplier = 1.0f;
  int32_t offset = 0;
};
// acc: kInt8DepthwiseChunk + kInt8DepthwiseRound int32 of scratch; the phases need
// kInt8DepthwiseRound bytes of slack past the last plane (sums run in whole 16-lane vectors).
constexpr int64_t kInt8DepthwiseChunk = 2048;
constexpr int64_t kInt8DepthwiseRound = 16;
void int8_depthwise_plane(const Int8DepthwisePlane& p, const Int8Requant& rq, int32_t* acc,
                          uint8_t* y);

}  // namespace tessera::cpu

namespace tessera::cpu {

// dst[j] = src[j * stride] ^ flip for j < n (stride 1 or 2 in vectors, others scalar), reading
// nothing past src[(n - 1) * stride]: the row copies that build the int8 convs' phase planes.
void int8_copy_flip(const uint8_t* src, int64_t stride, int64_t n, uint8_t flip, uint8_t* dst);
// The same over `rows` rows, src and dst advancing by their pitches.
void int8_copy_flip_rows(const uint8_t* src, int64_t src_pitch, int64_t rows, int64_t stride,
                         int64_t n, uint8_t flip, uint8_t* dst, int64_t dst_pitch);

}  // namespace tessera::cpu
