// Elementwise, reduction and normalisation kernels of the cpu plugin (kernels/elementwise.cpp):
// plain functions over float32 runs, one Highway source dispatched at run time. The op steps in
// ops/ map graph shapes (broadcasting, axes) onto these runs; tests compare both with core's
// reference kernels.
#pragma once

#include <cstdint>
#include <limits>

namespace tessera::cpu {

// A pointwise function y = f(x), then a clamp to [lo, hi] (Relu and Clip are kIdentity with
// bounds). One struct describes every activation a step runs alone or in a producer's epilogue.
enum class UnaryOp : int32_t {
  kIdentity,
  kSigmoid,      // 1 / (1 + e^-x)
  kHardSigmoid,  // max(0, min(1, alpha x + beta))
  kHardSwish,    // x * max(0, min(1, x / 6 + 1 / 2))
  kSilu,         // x * sigmoid(x): the Sigmoid-Mul pair exporters write for SiLU / Swish
  kTanh,
  kErf,
  kGelu,      // 0.5 x (1 + erf(x / sqrt 2))
  kGeluTanh,  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
  kExp,
  kLog,
  kSqrt,
  kReciprocal,
  kAbs,
  kNeg,
  kFloor,
  kCeil,
  kLeakyRelu,  // x >= 0 ? x : alpha x
  kElu,        // x >= 0 ? x : alpha (e^x - 1)
  kSelu,       // gamma (x > 0 ? x : alpha (e^x - 1))
  kSoftplus,   // log(1 + e^x)
  kMish,       // x tanh(softplus(x))
  kSquare,     // x * x (Pow with exponent 2)
  // QuantizeLinear then DequantizeLinear in float: (clamp(round(x / alpha) + beta, gamma,
  // gamma + 255) - beta) * alpha, rounding half to even (alpha the scale, beta the zero point,
  // gamma the quantized type's lowest value: 0 for uint8, -128 for int8).
  kFakeQuant,
  kSin,
  kCos,
  kTan,
  kAtan,
  kSign,             // 1, -1 or 0 (NaN stays NaN)
  kRound,            // to nearest, halves to even
  kSoftsign,         // x / (1 + |x|)
  kCelu,             // x > 0 ? x : alpha (e^(x / alpha) - 1)
  kThresholdedRelu,  // x > alpha ? x : 0
  kShrink,           // x < -alpha ? x + beta : x > alpha ? x - beta : 0
};

struct UnaryFn {
  UnaryOp op = UnaryOp::kIdentity;
  float alpha = 0.0f, beta = 0.0f, gamma = 0.0f;
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  bool is_clamp_only() const { return op == UnaryOp::kIdentity; }
};

// y[i] = fn(x[i]) for i < n on the calling thread (x == y is allowed).
void unary_run(const UnaryFn& fn, const float* x, float* y, int64_t n);
// y = fn(y) over a rows x cols block of row stride ldc, on the calling thread: a kernel's
// epilogue for a block it just finished.
void unary_rows(const UnaryFn& fn, float* y, int64_t ldc, int64_t rows, int64_t cols);
// y = fn(x) from a rows x cols block of x (row stride ldx) into y (row stride ldy), on the
// calling thread: a GEMM register tile's epilogue, from the tile's buffer into C.
void unary_block(const UnaryFn& fn, const float* x, int64_t ldx, float* y, int64_t ldy,
                 int64_t rows, int64_t cols);
// The same over n elements in parallel chunks (inside the caller's task_arena).
void unary_parallel(const UnaryFn& fn, const float* x, float* y, int64_t n);

enum class BinaryOp : int32_t { kAdd, kSub, kMul, kDiv, kMin, kMax, kPow, kPRelu };

// y[i] = a[i * sa] op b[i * sb] for i < n, sa and sb each 0 (a broadcast scalar) or 1, on the
// calling thread; then the clamp of `act` (lo, hi) when the op is followed by one.
void binary_run(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y,
                int64_t n, float lo, float hi);

enum class ReduceOp : int32_t {
  kSum,
  kMean,
  kMax,
  kMin,
  kSumSquare,
  kL2,
  kL1,
  kLogSumExp,
  kProd,
  kLogSum,  // log of the sum
};

// The reduction of the contiguous run x[0, n) (the mean divides by n; L2 takes the root).
float reduce_run(ReduceOp op, const float* x, int64_t n);
// acc[j] = combine(acc[j], x[j]) for j < n: reduces an outer axis row by row (strided axes).
// The first row is a copy (or square/abs for kSumSquare, kL2, kL1): `first` says which.
void reduce_rows(ReduceOp op, const float* x, float* acc, int64_t n, bool first);
// Finishes rows reduced with reduce_rows: the mean's division by `count`, L2's root, LogSum's
// log.
void reduce_finish(ReduceOp op, float* acc, int64_t n, int64_t count);

// Normalises one row of n values: y = (x - mean) / sqrt(var + eps) * scale + bias (scale and
// bias of n values, either may be nullptr).
void layer_norm_run(const float* x, int64_t n, const float* scale, const float* bias, float eps,
                    float* y);
// The mean of x[0, n) and 1 / sqrt(variance + eps), the variance from centred values: the
// statistics of a LayerNorm row, an InstanceNorm plane or a GroupNorm group.
void norm_moments(const float* x, int64_t n, float eps, float* mean, float* inv_std);
// LayerNormalization over the channels of an NCHW image (timm's LayerNorm2d, exported as
// Transpose -> LayerNormalization -> Transpose): pixels [p0, p1) of x [c, hw], each normalised
// over its c values, then scale[ch] and bias[ch] (either may be nullptr); y is [c, hw], or [hw, c]
// when nhwc (the LayerNormalization's own output layout). tile: per-thread scratch of
// channel_layer_norm_tile_floats(c) floats, used when nhwc.
void channel_layer_norm(const float* x, int64_t c, int64_t hw, int64_t p0, int64_t p1,
                        const float* scale, const float* bias, float eps, bool nhwc, float* y,
                        float* tile);
int64_t channel_layer_norm_tile_floats(int64_t c);
// y[i] = x[i] * a + b for i < n (x == y is allowed): a normalised channel's scale and shift.
void scale_shift_run(const float* x, int64_t n, float a, float b, float* y);
// Softmax (or LogSoftmax) of one contiguous row of n values.
void softmax_run(const float* x, float* y, int64_t n, bool log);
// LRN's scaling: y = x * (k + a * s)^-beta over n elements (s: the window's sums of squares).
void lrn_scale_run(const float* s, const float* x, int64_t n, float k, float a, float beta,
                   float* y);
// dst[c * ldd + r] = src[r * lds + c] for r < rows, c < cols (the two must not overlap): a 2-D
// transpose in 8 x 8 (AVX2 / AVX-512) or 4 x 4 register blocks.
void transpose_2d(const float* src, int64_t lds, float* dst, int64_t ldd, int64_t rows,
                  int64_t cols);

}  // namespace tessera::cpu
