// Highway source of the elementwise kernels (kernels/elementwise.hpp): activations, broadcast
// binary runs, reductions, LayerNorm and Softmax rows. foreach_target.h re-includes this file
// once per enabled target; HWY_DYNAMIC_DISPATCH picks the best one on the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/elementwise.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/elementwise.hpp"
#include "kernels/partial_vectors-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// The largest vector any target has (SVE at 2048 bits): tails are copied into a buffer this
// size and computed as one whole vector, so tails and bodies round identically.
constexpr size_t kMaxLanes = 64;

// Applies f (vector -> vector) to x[0, n) into y, whole vectors then the tail through a buffer.
template <class F>
HWY_INLINE void MapRun(const float* x, float* y, int64_t n, const F& f) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  // Two vectors per iteration: two independent chains for the long activations (SiLU's is ~20
  // dependent instructions).
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const VF a = f(hn::LoadU(d, x + i));
    const VF b = f(hn::LoadU(d, x + i + lanes));
    hn::StoreU(a, d, y + i);
    hn::StoreU(b, d, y + i + lanes);
  }
  for (; i + lanes <= n; i += lanes) hn::StoreU(f(hn::LoadU(d, x + i)), d, y + i);
  if (i < n) {
    HWY_ALIGN float buf[kMaxLanes] = {};
    std::copy(x + i, x + n, buf);
    hn::Store(f(hn::Load(d, buf)), d, buf);
    std::copy(buf, buf + (n - i), y + i);
  }
}

// 1 / a to ~2 ulp: the estimate (12 bits on x86) and one Newton step, a third of a divide's
// latency; activations divide once per element.
HWY_INLINE VF Reciprocal(DF d, VF a) {
  const VF r = hn::ApproximateReciprocal(a);
  return hn::Mul(r, hn::NegMulAdd(a, r, hn::Set(d, 2.0f)));
}

// e^x for the activations, without the special cases a general exp handles: x is clamped to
// [-87, 88] (results stay normal floats, saturating where sigmoid and erf no longer change).
// x = n ln2 + r, |r| <= ln2 / 2, ln2 split in two so n ln2 is exact; e^r by its degree-6
// Taylor polynomial (relative error below 1.2e-7 on that range); 2^n built in the exponent
// bits. Highway's Exp, which covers the whole float range, had made SiLU twice as slow as ONNX
// Runtime's (mobilevit, efficientnet).
HWY_INLINE VF ActivationExp(DF d, VF x) {
  const hn::RebindToSigned<DF> di;
  x = hn::Min(hn::Max(x, hn::Set(d, -87.0f)), hn::Set(d, 88.0f));
  // n = round(x log2 e) by adding 1.5 * 2^23: n lands in the low mantissa bits of t (a rounding
  // and a conversion with its out-of-range fix-up were a third of the instructions).
  const VF shifter = hn::Set(d, 12582912.0f);
  const VF t = hn::MulAdd(x, hn::Set(d, 1.44269504088896341f), shifter);
  const VF n = hn::Sub(t, shifter);
  VF r = hn::NegMulAdd(n, hn::Set(d, 0.693359375f), x);
  r = hn::NegMulAdd(n, hn::Set(d, -2.12194440e-4f), r);
  VF p = hn::Set(d, 1.0f / 720.0f);
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 120.0f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 24.0f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 6.0f));
  p = hn::MulAdd(p, r, hn::Set(d, 0.5f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f));
  // t's bits are 0x4B400000 + n; shifted left 23 the constant's bits all leave the word.
  const auto bits = hn::ShiftLeft<23>(hn::Add(hn::BitCast(di, t), hn::Set(di, 127)));
  return hn::Mul(p, hn::BitCast(d, bits));
}

// erf(x) by Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7): sign(x) (1 - t p(t) e^{-x^2}),
// t = 1 / (1 + 0.3275911 |x|).
HWY_INLINE VF Erf(DF d, VF x) {
  const VF ax = hn::Abs(x);
  const VF t = Reciprocal(d, hn::MulAdd(hn::Set(d, 0.3275911f), ax, hn::Set(d, 1.0f)));
  VF p = hn::Set(d, 1.061405429f);
  p = hn::MulAdd(p, t, hn::Set(d, -1.453152027f));
  p = hn::MulAdd(p, t, hn::Set(d, 1.421413741f));
  p = hn::MulAdd(p, t, hn::Set(d, -0.284496736f));
  p = hn::MulAdd(p, t, hn::Set(d, 0.254829592f));
  p = hn::Mul(p, t);
  const VF e = ActivationExp(d, hn::Neg(hn::Mul(ax, ax)));
  const VF r = hn::NegMulAdd(p, e, hn::Set(d, 1.0f));
  return hn::CopySign(r, x);
}

HWY_INLINE VF Sigmoid(DF d, VF x) {
  // e^-x saturates at e^88 for x < -88: the result rounds to 0 there anyway.
  return Reciprocal(d, hn::Add(hn::Set(d, 1.0f), ActivationExp(d, hn::Neg(x))));
}

HWY_INLINE VF Softplus(DF d, VF x) {
  // max(x, 0) + log1p(e^-|x|): no overflow for large |x|.
  return hn::Add(hn::Max(x, hn::Zero(d)), hn::Log1p(d, hn::Exp(d, hn::Neg(hn::Abs(x)))));
}

// Highway's Sin and Cos reduce their argument for |x| <= 39000 only: lanes past that (and NaN,
// infinities) take the C library's, as the reference kernels do.
template <class Scalar>
HWY_INLINE VF Trig(DF d, VF x, VF v, Scalar scalar) {
  if (HWY_LIKELY(hn::AllTrue(d, hn::Le(hn::Abs(x), hn::Set(d, 39000.0f))))) return v;
  HWY_ALIGN float lanes[HWY_MAX_BYTES / sizeof(float)];
  hn::Store(x, d, lanes);
  for (size_t i = 0; i < hn::Lanes(d); ++i) lanes[i] = scalar(lanes[i]);
  return hn::Load(d, lanes);
}

// `op` is a constant where UnaryBlock instantiates it, so the switch folds away in each loop.
HWY_INLINE VF Apply(DF d, UnaryOp op, const UnaryFn& f, VF x) {
  const VF zero = hn::Zero(d), one = hn::Set(d, 1.0f);
  switch (op) {
    case UnaryOp::kIdentity:
      return x;
    case UnaryOp::kSigmoid:
      return Sigmoid(d, x);
    case UnaryOp::kHardSigmoid:
      return hn::Min(hn::Max(hn::MulAdd(hn::Set(d, f.alpha), x, hn::Set(d, f.beta)), zero), one);
    case UnaryOp::kHardSwish:
      return hn::Mul(
          x, hn::Min(hn::Max(hn::MulAdd(hn::Set(d, 1.0f / 6.0f), x, hn::Set(d, 0.5f)), zero), one));
    case UnaryOp::kSilu:
      return hn::Mul(x, Sigmoid(d, x));
    case UnaryOp::kTanh:
      return hn::Tanh(d, x);
    case UnaryOp::kErf:
      return Erf(d, x);
    case UnaryOp::kGelu: {
      const VF e = Erf(d, hn::Mul(x, hn::Set(d, 0.70710678118654752f)));
      return hn::Mul(hn::Mul(hn::Set(d, 0.5f), x), hn::Add(one, e));
    }
    case UnaryOp::kGeluTanh: {
      const VF x3 = hn::Mul(hn::Mul(x, x), x);
      const VF inner =
          hn::Mul(hn::Set(d, 0.79788456080286536f), hn::MulAdd(hn::Set(d, 0.044715f), x3, x));
      return hn::Mul(hn::Mul(hn::Set(d, 0.5f), x), hn::Add(one, hn::Tanh(d, inner)));
    }
    case UnaryOp::kExp:
      return hn::Exp(d, x);
    case UnaryOp::kLog: {
      // Highway's Log covers (0, FLT_MAX]; 0 gives -inf and negative inputs NaN as std::log does.
      const VF safe = hn::IfThenElse(hn::Gt(x, zero), x, one);
      const VF edge = hn::IfThenElse(hn::Eq(x, zero),
                                     hn::Set(d, -std::numeric_limits<float>::infinity()),
                                     hn::Set(d, std::numeric_limits<float>::quiet_NaN()));
      return hn::IfThenElse(hn::Gt(x, zero), hn::Log(d, safe), edge);
    }
    case UnaryOp::kSqrt:
      return hn::Sqrt(x);
    case UnaryOp::kReciprocal:
      return hn::Div(one, x);
    case UnaryOp::kAbs:
      return hn::Abs(x);
    case UnaryOp::kNeg:
      return hn::Neg(x);
    case UnaryOp::kFloor:
      return hn::Floor(x);
    case UnaryOp::kCeil:
      return hn::Ceil(x);
    case UnaryOp::kLeakyRelu:
      return hn::IfThenElse(hn::Lt(x, zero), hn::Mul(hn::Set(d, f.alpha), x), x);
    case UnaryOp::kElu:
    case UnaryOp::kSelu: {
      const VF neg = hn::Mul(hn::Set(d, f.alpha), hn::Expm1(d, hn::Min(x, zero)));
      const VF r = hn::IfThenElse(hn::Gt(x, zero), x, neg);
      return op == UnaryOp::kSelu ? hn::Mul(hn::Set(d, f.gamma), r) : r;
    }
    case UnaryOp::kSoftplus:
      return Softplus(d, x);
    case UnaryOp::kMish:
      return hn::Mul(x, hn::Tanh(d, Softplus(d, x)));
    case UnaryOp::kSquare:
      return hn::Mul(x, x);
    case UnaryOp::kFakeQuant: {
      const VF scale = hn::Set(d, f.alpha), zero = hn::Set(d, f.beta);
      const VF lo = hn::Set(d, f.gamma), hi = hn::Set(d, f.gamma + 255.0f);
      const VF q = hn::Add(hn::Round(hn::Div(x, scale)), zero);
      // NaN quantizes to the lowest value, as the scalar QuantizeLinear does.
      const VF c = hn::IfThenElse(hn::IsNaN(q), lo, hn::Min(hn::Max(q, lo), hi));
      return hn::Mul(hn::Sub(c, zero), scale);
    }
    case UnaryOp::kSin:
      return Trig(d, x, hn::Sin(d, x), [](float v) { return std::sin(v); });
    case UnaryOp::kCos:
      return Trig(d, x, hn::Cos(d, x), [](float v) { return std::cos(v); });
    case UnaryOp::kTan:
      return Trig(d, x, hn::Div(hn::Sin(d, x), hn::Cos(d, x)), [](float v) { return std::tan(v); });
    case UnaryOp::kAtan:
      return hn::IfThenElse(hn::IsNaN(x), x, hn::Atan(d, x));
    case UnaryOp::kSign: {
      const VF s = hn::IfThenElse(hn::Gt(x, zero), one,
                                  hn::IfThenElseZero(hn::Lt(x, zero), hn::Set(d, -1.0f)));
      return hn::IfThenElse(hn::IsNaN(x), x, s);
    }
    case UnaryOp::kRound:
      return hn::Round(x);
    case UnaryOp::kSoftsign:
      return hn::Div(x, hn::Add(one, hn::Abs(x)));
    case UnaryOp::kCelu: {
      const VF neg = hn::Mul(hn::Set(d, f.alpha),
                             hn::Expm1(d, hn::Div(hn::Min(x, zero), hn::Set(d, f.alpha))));
      return hn::IfThenElse(hn::IsNaN(x), x, hn::IfThenElse(hn::Gt(x, zero), x, neg));
    }
    case UnaryOp::kThresholdedRelu:
      return hn::IfThenElseZero(hn::Gt(x, hn::Set(d, f.alpha)), x);
    case UnaryOp::kShrink: {
      const VF l = hn::Set(d, f.alpha), b = hn::Set(d, f.beta);
      return hn::IfThenElse(hn::Lt(x, hn::Neg(l)), hn::Add(x, b),
                            hn::IfThenElseZero(hn::Gt(x, l), hn::Sub(x, b)));
    }
  }
  return x;
}

template <UnaryOp kOp>
HWY_INLINE void UnaryBlockT(const UnaryFn& f, const float* x, int64_t ldx, float* y, int64_t ldy,
                            int64_t rows, int64_t cols) {
  const DF d;
  const VF lo = hn::Set(d, f.lo), hi = hn::Set(d, f.hi);
  // Without bounds the clamp is left out: 2 of SiLU's ~24 vector instructions.
  const bool clamp = f.lo > -std::numeric_limits<float>::infinity() ||
                     f.hi < std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < rows; ++r) {
    if (clamp) {
      MapRun(x + r * ldx, y + r * ldy, cols,
             [&](VF v) { return hn::Min(hn::Max(Apply(d, kOp, f, v), lo), hi); });
    } else {
      MapRun(x + r * ldx, y + r * ldy, cols, [&](VF v) { return Apply(d, kOp, f, v); });
    }
  }
}

// One loop per op: with the op read inside the loop, the switch ran per vector and kept the
// compiler from interleaving iterations. A block's rows in one call: the GEMM epilogue runs it
// per register tile, where a call per row had cost as much as the activation itself.
HWY_ATTR void UnaryBlock(const UnaryFn* fn, const float* x, int64_t ldx, float* y, int64_t ldy,
                         int64_t rows, int64_t cols) {
  const UnaryFn f = *fn;
  switch (f.op) {
#define TESSERA_UNARY_CASE(OP)                                \
  case UnaryOp::OP:                                           \
    UnaryBlockT<UnaryOp::OP>(f, x, ldx, y, ldy, rows, cols); \
    return;
    TESSERA_UNARY_CASE(kIdentity)
    TESSERA_UNARY_CASE(kSigmoid)
    TESSERA_UNARY_CASE(kHardSigmoid)
    TESSERA_UNARY_CASE(kHardSwish)
    TESSERA_UNARY_CASE(kSilu)
    TESSERA_UNARY_CASE(kTanh)
    TESSERA_UNARY_CASE(kErf)
    TESSERA_UNARY_CASE(kGelu)
    TESSERA_UNARY_CASE(kGeluTanh)
    TESSERA_UNARY_CASE(kExp)
    TESSERA_UNARY_CASE(kLog)
    TESSERA_UNARY_CASE(kSqrt)
    TESSERA_UNARY_CASE(kReciprocal)
    TESSERA_UNARY_CASE(kAbs)
    TESSERA_UNARY_CASE(kNeg)
    TESSERA_UNARY_CASE(kFloor)
    TESSERA_UNARY_CASE(kCeil)
    TESSERA_UNARY_CASE(kLeakyRelu)
    TESSERA_UNARY_CASE(kElu)
    TESSERA_UNARY_CASE(kSelu)
    TESSERA_UNARY_CASE(kSoftplus)
    TESSERA_UNARY_CASE(kMish)
    TESSERA_UNARY_CASE(kSquare)
    TESSERA_UNARY_CASE(kFakeQuant)
    TESSERA_UNARY_CASE(kSin)
    TESSERA_UNARY_CASE(kCos)
    TESSERA_UNARY_CASE(kTan)
    TESSERA_UNARY_CASE(kAtan)
    TESSERA_UNARY_CASE(kSign)
    TESSERA_UNARY_CASE(kRound)
    TESSERA_UNARY_CASE(kSoftsign)
    TESSERA_UNARY_CASE(kCelu)
    TESSERA_UNARY_CASE(kThresholdedRelu)
    TESSERA_UNARY_CASE(kShrink)
#undef TESSERA_UNARY_CASE
  }
}

HWY_INLINE VF Combine(DF d, BinaryOp op, VF a, VF b) {
  switch (op) {
    case BinaryOp::kAdd:
      return hn::Add(a, b);
    case BinaryOp::kSub:
      return hn::Sub(a, b);
    case BinaryOp::kMul:
      return hn::Mul(a, b);
    case BinaryOp::kDiv:
      return hn::Div(a, b);
    case BinaryOp::kMin:
      return hn::Min(a, b);
    case BinaryOp::kMax:
      return hn::Max(a, b);
    case BinaryOp::kPRelu:
      return hn::IfThenElse(hn::Lt(a, hn::Zero(d)), hn::Mul(a, b), a);
    case BinaryOp::kPow:
      break;  // scalar, in BinaryRun
  }
  return a;
}

template <BinaryOp kOp>
HWY_INLINE void BinaryRunT(const float* a, int64_t sa, const float* b, int64_t sb, float* y,
                           int64_t n, float lo_s, float hi_s) {
  const DF d;
  const VF lo = hn::Set(d, lo_s), hi = hn::Set(d, hi_s);
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto load = [&](const float* p, int64_t s, int64_t i) {
    return s == 0 ? hn::Set(d, p[0]) : hn::LoadU(d, p + i);
  };
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const VF r = Combine(d, kOp, load(a, sa, i), load(b, sb, i));
    hn::StoreU(hn::Min(hn::Max(r, lo), hi), d, y + i);
  }
  if (i < n) {
    HWY_ALIGN float ba[kMaxLanes] = {}, bb[kMaxLanes] = {};
    for (int64_t j = i; j < n; ++j) {
      ba[j - i] = a[j * sa];
      bb[j - i] = b[j * sb];
    }
    // Unused lanes of a division stay 0 / 0: NaN there is never stored.
    const VF r = Combine(d, kOp, hn::Load(d, ba), hn::Load(d, bb));
    hn::Store(hn::Min(hn::Max(r, lo), hi), d, ba);
    std::copy(ba, ba + (n - i), y + i);
  }
}

HWY_ATTR void BinaryRun(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb,
                        float* y, int64_t n, float lo, float hi) {
  switch (op) {
    case BinaryOp::kAdd:
      return BinaryRunT<BinaryOp::kAdd>(a, sa, b, sb, y, n, lo, hi);
    case BinaryOp::kSub:
      return BinaryRunT<BinaryOp::kSub>(a, sa, b, sb, y, n, lo, hi);
    case BinaryOp::kMul:
      return BinaryRunT<BinaryOp::kMul>(a, sa, b, sb, y, n, lo, hi);
    case BinaryOp::kDiv:
      return BinaryRunT<BinaryOp::kDiv>(a, sa, b, sb, y, n, lo, hi);
    case BinaryOp::kMin:
      return BinaryRunT<BinaryOp::kMin>(a, sa, b, sb, y, n, lo, hi);
    case BinaryOp::kMax:
      return BinaryRunT<BinaryOp::kMax>(a, sa, b, sb, y, n, lo, hi);
    case BinaryOp::kPRelu:
      return BinaryRunT<BinaryOp::kPRelu>(a, sa, b, sb, y, n, lo, hi);
    case BinaryOp::kPow:
      // Negative bases with integral exponents and the zero cases follow std::pow exactly.
      for (int64_t i = 0; i < n; ++i) {
        y[i] = std::min(std::max(std::pow(a[i * sa], b[i * sb]), lo), hi);
      }
      return;
  }
}

// The term a sum-like reduction adds for v: v^2 (SumSquare, L2), |v| (L1), else v.
HWY_INLINE VF Lift(ReduceOp op, VF v) {
  if (op == ReduceOp::kSumSquare || op == ReduceOp::kL2) return hn::Mul(v, v);
  if (op == ReduceOp::kL1) return hn::Abs(v);
  return v;
}
HWY_INLINE float LiftScalar(ReduceOp op, float v) {
  if (op == ReduceOp::kSumSquare || op == ReduceOp::kL2) return v * v;
  if (op == ReduceOp::kL1) return std::fabs(v);
  return v;
}

HWY_ATTR float ReduceRun(ReduceOp op, const float* x, int64_t n) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const float inf = std::numeric_limits<float>::infinity();
  if (op == ReduceOp::kMax || op == ReduceOp::kMin || op == ReduceOp::kLogSumExp) {
    const bool is_min = op == ReduceOp::kMin;
    VF acc = hn::Set(d, is_min ? inf : -inf);
    int64_t i = 0;
    for (; i + lanes <= n; i += lanes) {
      const VF v = hn::LoadU(d, x + i);
      acc = is_min ? hn::Min(acc, v) : hn::Max(acc, v);
    }
    float r = hn::GetLane(is_min ? hn::MinOfLanes(d, acc) : hn::MaxOfLanes(d, acc));
    for (; i < n; ++i) r = is_min ? std::min(r, x[i]) : std::max(r, x[i]);
    if (op != ReduceOp::kLogSumExp) return r;
    const float mx = r;
    if (std::isinf(mx)) return mx;
    VF sum = hn::Zero(d);
    const VF vmx = hn::Set(d, mx);
    for (i = 0; i + lanes <= n; i += lanes) {
      sum = hn::Add(sum, hn::Exp(d, hn::Sub(hn::LoadU(d, x + i), vmx)));
    }
    float s = hn::GetLane(hn::SumOfLanes(d, sum));
    for (; i < n; ++i) s += std::exp(x[i] - mx);
    return mx + std::log(s);
  }
  if (op == ReduceOp::kProd) {
    VF acc0 = hn::Set(d, 1.0f), acc1 = acc0;
    int64_t i = 0;
    for (; i + 2 * lanes <= n; i += 2 * lanes) {
      acc0 = hn::Mul(acc0, hn::LoadU(d, x + i));
      acc1 = hn::Mul(acc1, hn::LoadU(d, x + i + lanes));
    }
    HWY_ALIGN float part[HWY_MAX_BYTES / sizeof(float)];
    hn::Store(hn::Mul(acc0, acc1), d, part);
    float p = 1.0f;
    for (int64_t l = 0; l < lanes; ++l) p *= part[l];
    for (; i < n; ++i) p *= x[i];
    return p;
  }
  VF acc0 = hn::Zero(d), acc1 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    acc0 = hn::Add(acc0, Lift(op, hn::LoadU(d, x + i)));
    acc1 = hn::Add(acc1, Lift(op, hn::LoadU(d, x + i + lanes)));
  }
  float s = hn::GetLane(hn::SumOfLanes(d, hn::Add(acc0, acc1)));
  for (; i < n; ++i) s += LiftScalar(op, x[i]);
  if (op == ReduceOp::kMean) return n > 0 ? s / static_cast<float>(n) : s;
  if (op == ReduceOp::kL2) return std::sqrt(s);
  if (op == ReduceOp::kLogSum) return std::log(s);
  return s;
}

HWY_ATTR void ReduceRows(ReduceOp op, const float* x, float* acc, int64_t n, bool first) {
  const DF d;
  if (first) {
    MapRun(x, acc, n, [&](VF v) { return Lift(op, v); });
    return;
  }
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  auto combine = [&](VF a, VF v) {
    if (op == ReduceOp::kMax) return hn::Max(a, v);
    if (op == ReduceOp::kMin) return hn::Min(a, v);
    if (op == ReduceOp::kProd) return hn::Mul(a, v);
    return hn::Add(a, Lift(op, v));
  };
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(combine(hn::LoadU(d, acc + i), hn::LoadU(d, x + i)), d, acc + i);
  }
  for (; i < n; ++i) {
    const float v = x[i];
    if (op == ReduceOp::kMax) {
      acc[i] = std::max(acc[i], v);
    } else if (op == ReduceOp::kMin) {
      acc[i] = std::min(acc[i], v);
    } else if (op == ReduceOp::kProd) {
      acc[i] *= v;
    } else {
      acc[i] += LiftScalar(op, v);
    }
  }
}

HWY_ATTR void NormMoments(const float* x, int64_t n, float eps, float* mean_out,
                          float* inv_out) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const float mean = ReduceRun(ReduceOp::kMean, x, n);
  // Variance from centred values: one more pass, but no cancellation for large means.
  const VF vm = hn::Set(d, mean);
  VF acc = hn::Zero(d);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const VF c = hn::Sub(hn::LoadU(d, x + i), vm);
    acc = hn::MulAdd(c, c, acc);
  }
  float var = hn::GetLane(hn::SumOfLanes(d, acc));
  for (; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= static_cast<float>(std::max<int64_t>(n, 1));
  *mean_out = mean;
  *inv_out = 1.0f / std::sqrt(var + eps);
}

HWY_ATTR void LayerNormRun(const float* x, int64_t n, const float* scale, const float* bias,
                           float eps, float* y) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  float mean, inv;
  NormMoments(x, n, eps, &mean, &inv);
  const VF vm = hn::Set(d, mean);
  const VF vinv = hn::Set(d, inv);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    VF v = hn::Mul(hn::Sub(hn::LoadU(d, x + i), vm), vinv);
    if (scale != nullptr) v = hn::Mul(v, hn::LoadU(d, scale + i));
    if (bias != nullptr) v = hn::Add(v, hn::LoadU(d, bias + i));
    hn::StoreU(v, d, y + i);
  }
  for (; i < n; ++i) {
    float v = (x[i] - mean) * inv;
    if (scale != nullptr) v *= scale[i];
    if (bias != nullptr) v += bias[i];
    y[i] = v;
  }
}

// Pixels [p0, p1) of one [c, hw] image, each normalised over its c channels: vectors run across
// pixels, so every channel is a unit-stride load and no transposed copy is made. Written as
// [c, hw] (nhwc false) or, through `tile` (c x lanes floats), as [hw, c].
HWY_ATTR void ChannelLayerNorm(const float* x, int64_t c, int64_t hw, int64_t p0, int64_t p1,
                               const float* scale, const float* bias, float eps, bool nhwc,
                               float* y, float* tile) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const VF inv_c = hn::Set(d, 1.0f / static_cast<float>(c));
  const VF veps = hn::Set(d, eps), one = hn::Set(d, 1.0f);
  for (int64_t p = p0; p < p1; p += lanes) {
    const int64_t n = std::min(lanes, p1 - p);
    const float* col = x + p;
    // Two accumulators per sum: the channel loop is a dependency chain otherwise.
    VF s0 = hn::Zero(d), s1 = hn::Zero(d);
    int64_t ch = 0;
    for (; ch + 1 < c; ch += 2) {
      s0 = hn::Add(s0, LoadFirst(d, col + ch * hw, n));
      s1 = hn::Add(s1, LoadFirst(d, col + (ch + 1) * hw, n));
    }
    if (ch < c) s0 = hn::Add(s0, LoadFirst(d, col + ch * hw, n));
    const VF mean = hn::Mul(hn::Add(s0, s1), inv_c);
    VF q0 = hn::Zero(d), q1 = hn::Zero(d);
    for (ch = 0; ch + 1 < c; ch += 2) {
      const VF a = hn::Sub(LoadFirst(d, col + ch * hw, n), mean);
      const VF b = hn::Sub(LoadFirst(d, col + (ch + 1) * hw, n), mean);
      q0 = hn::MulAdd(a, a, q0);
      q1 = hn::MulAdd(b, b, q1);
    }
    if (ch < c) {
      const VF a = hn::Sub(LoadFirst(d, col + ch * hw, n), mean);
      q0 = hn::MulAdd(a, a, q0);
    }
    const VF inv = hn::Div(one, hn::Sqrt(hn::MulAdd(hn::Add(q0, q1), inv_c, veps)));
    for (ch = 0; ch < c; ++ch) {
      VF v = hn::Mul(hn::Sub(LoadFirst(d, col + ch * hw, n), mean), inv);
      if (scale != nullptr) v = hn::Mul(v, hn::Set(d, scale[ch]));
      if (bias != nullptr) v = hn::Add(v, hn::Set(d, bias[ch]));
      if (nhwc) {
        hn::StoreU(v, d, tile + ch * lanes);
      } else {
        StoreFirst(v, d, y + ch * hw + p, n);
      }
    }
    if (nhwc) {
      for (int64_t i = 0; i < n; ++i) {
        float* row = y + (p + i) * c;
        for (ch = 0; ch < c; ++ch) row[ch] = tile[ch * lanes + i];
      }
    }
  }
}

// Floats of ChannelLayerNorm's tile on this target: c rows of one vector.
HWY_ATTR int64_t ChannelLayerNormTileFloats(int64_t c) {
  return c * static_cast<int64_t>(hn::Lanes(DF()));
}

HWY_ATTR void ScaleShiftRun(const float* x, int64_t n, float a, float b, float* y) {
  const DF d;
  const VF va = hn::Set(d, a), vb = hn::Set(d, b);
  MapRun(x, y, n, [&](VF v) { return hn::MulAdd(v, va, vb); });
}

// y = x * (k + a * s)^-beta, as e^(-beta log(k + a s)); k + a s > 0 for LRN's positive bias.
HWY_ATTR void LrnScaleRun(const float* s, const float* x, int64_t n, float k, float a, float beta,
                          float* y) {
  const DF d;
  const VF vk = hn::Set(d, k), va = hn::Set(d, a), vnb = hn::Set(d, -beta);
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto scale = [&](VF sv) { return hn::Exp(d, hn::Mul(vnb, hn::Log(d, hn::MulAdd(va, sv, vk)))); };
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(hn::Mul(hn::LoadU(d, x + i), scale(hn::LoadU(d, s + i))), d, y + i);
  }
  for (; i < n; ++i) y[i] = x[i] * std::exp(-beta * std::log(k + a * s[i]));
}

HWY_ATTR void SoftmaxRun(const float* x, float* y, int64_t n, bool log) {
  const DF d;
  const float mx = ReduceRun(ReduceOp::kMax, x, n);
  const VF vmx = hn::Set(d, mx);
  if (log) {
    const float lse = std::log(
        [&] {
          float s = 0.0f;
          for (int64_t i = 0; i < n; ++i) s += std::exp(x[i] - mx);
          return s;
        }());
    // (x - max) - lse: max + lse would round lse's digits away beside a large max (inputs near
    // 1e4 lost 2e-4).
    const VF vlse = hn::Set(d, lse);
    MapRun(x, y, n, [&](VF v) { return hn::Sub(hn::Sub(v, vmx), vlse); });
    return;
  }
  // e^(x - max) stored and summed in one pass; x - max <= 0, where the activations' exp is
  // exact to 1.2e-7 and saturates below e^-87 (terms that no longer change the sum).
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  VF vsum = hn::Zero(d);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const VF e = ActivationExp(d, hn::Sub(hn::LoadU(d, x + i), vmx));
    hn::StoreU(e, d, y + i);
    vsum = hn::Add(vsum, e);
  }
  float sum = hn::GetLane(hn::SumOfLanes(d, vsum));
  for (; i < n; ++i) {
    y[i] = std::exp(x[i] - mx);
    sum += y[i];
  }
  const float inv = 1.0f / sum;
  const VF vinv = hn::Set(d, inv);
  MapRun(y, y, n, [&](VF v) { return hn::Mul(v, vinv); });
}

// Calls block(r, c) for every kB x kB block covering rows x cols (both at least kB). Ragged
// edges take one more block shifted back to end at the edge: it writes a few elements twice with
// the same values (a transpose's src and dst do not overlap) instead of going scalar, which had
// cost as much as the rest for the 7-wide rows of a depthwise conv's tile.
template <int64_t kB, class Block>
HWY_INLINE void ShiftedBlocks(int64_t rows, int64_t cols, const Block& block) {
  for (int64_t r = 0;; r += kB) {
    r = std::min(r, rows - kB);
    for (int64_t c = 0;; c += kB) {
      c = std::min(c, cols - kB);
      block(r, c);
      if (c + kB >= cols) break;
    }
    if (r + kB >= rows) break;
  }
}

// dst[c * ldd + r] = src[r * lds + c] for r < rows, c < cols: blocks transposed in registers
// (8 x 8 in 256-bit vectors on AVX2 / AVX-512, else 4 x 4 in 128-bit ones), so both sides move
// whole vectors; only a side shorter than a block goes element by element.
HWY_ATTR void Transpose2D(const float* HWY_RESTRICT src, int64_t lds, float* HWY_RESTRICT dst,
                          int64_t ldd, int64_t rows, int64_t cols) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  // 8 x 8 blocks in 256-bit vectors: 24 shuffles per 64 floats, where 4 x 4 blocks take 64.
  if (rows >= 8 && cols >= 8) {
    const hn::FixedTag<float, 8> d;
    const hn::Repartition<double, decltype(d)> dd;
    auto block = [&](int64_t r, int64_t c) HWY_ATTR {
      const float* s = src + r * lds + c;
      hn::Vec<decltype(d)> v[8], t[8];
      for (int i = 0; i < 8; ++i) v[i] = hn::LoadU(d, s + i * lds);
      // Within each 128-bit half: pairs of rows interleaved, then pairs of pairs.
      for (int i = 0; i < 8; i += 2) {
        t[i] = hn::InterleaveLower(d, v[i], v[i + 1]);
        t[i + 1] = hn::InterleaveUpper(d, v[i], v[i + 1]);
      }
      for (int i = 0; i < 8; i += 4) {
        for (int j = 0; j < 2; ++j) {
          const auto a = hn::BitCast(dd, t[i + j]), b = hn::BitCast(dd, t[i + j + 2]);
          v[i + 2 * j] = hn::BitCast(d, hn::InterleaveLower(dd, a, b));
          v[i + 2 * j + 1] = hn::BitCast(d, hn::InterleaveUpper(dd, a, b));
        }
      }
      // Halves: rows 0-3 hold columns (k, k + 4) of the first four rows, rows 4-7 of the rest.
      float* o = dst + c * ldd + r;
      for (int k = 0; k < 4; ++k) {
        hn::StoreU(hn::ConcatLowerLower(d, v[4 + k], v[k]), d, o + k * ldd);
        hn::StoreU(hn::ConcatUpperUpper(d, v[4 + k], v[k]), d, o + (k + 4) * ldd);
      }
    };
    ShiftedBlocks<8>(rows, cols, block);
    return;
  }
#endif
#if HWY_TARGET != HWY_SCALAR  // one lane there: the loops below do it all
  if (rows >= 4 && cols >= 4) {
    const hn::FixedTag<float, 4> d;
    auto block = [&](int64_t r, int64_t c) HWY_ATTR {
      const float* s = src + r * lds + c;
      const auto r0 = hn::LoadU(d, s), r1 = hn::LoadU(d, s + lds);
      const auto r2 = hn::LoadU(d, s + 2 * lds), r3 = hn::LoadU(d, s + 3 * lds);
      const auto t0 = hn::InterleaveLower(d, r0, r1), t1 = hn::InterleaveLower(d, r2, r3);
      const auto t2 = hn::InterleaveUpper(d, r0, r1), t3 = hn::InterleaveUpper(d, r2, r3);
      float* o = dst + c * ldd + r;
      hn::StoreU(hn::ConcatLowerLower(d, t1, t0), d, o);
      hn::StoreU(hn::ConcatUpperUpper(d, t1, t0), d, o + ldd);
      hn::StoreU(hn::ConcatLowerLower(d, t3, t2), d, o + 2 * ldd);
      hn::StoreU(hn::ConcatUpperUpper(d, t3, t2), d, o + 3 * ldd);
    };
    ShiftedBlocks<4>(rows, cols, block);
    return;
  }
#endif
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) dst[c * ldd + r] = src[r * lds + c];
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace tessera::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <tbb/parallel_for.h>

namespace tessera::cpu {

HWY_EXPORT(UnaryBlock);
HWY_EXPORT(BinaryRun);
HWY_EXPORT(ReduceRun);
HWY_EXPORT(ReduceRows);
HWY_EXPORT(LayerNormRun);
HWY_EXPORT(NormMoments);
HWY_EXPORT(ScaleShiftRun);
HWY_EXPORT(ChannelLayerNorm);
HWY_EXPORT(ChannelLayerNormTileFloats);
HWY_EXPORT(SoftmaxRun);
HWY_EXPORT(Transpose2D);
HWY_EXPORT(LrnScaleRun);

void unary_run(const UnaryFn& fn, const float* x, float* y, int64_t n) {
  HWY_DYNAMIC_DISPATCH(UnaryBlock)(&fn, x, n, y, n, 1, n);
}

void unary_rows(const UnaryFn& fn, float* y, int64_t ldc, int64_t rows, int64_t cols) {
  if (ldc == cols) {
    unary_run(fn, y, y, rows * cols);
    return;
  }
  HWY_DYNAMIC_DISPATCH(UnaryBlock)(&fn, y, ldc, y, ldc, rows, cols);
}

void unary_block(const UnaryFn& fn, const float* x, int64_t ldx, float* y, int64_t ldy,
                 int64_t rows, int64_t cols) {
  HWY_DYNAMIC_DISPATCH(UnaryBlock)(&fn, x, ldx, y, ldy, rows, cols);
}

void unary_parallel(const UnaryFn& fn, const float* x, float* y, int64_t n) {
  // 16K floats (64 KiB) per task: enough work per task, and chunks stay in L2.
  constexpr int64_t kChunk = 1 << 14;
  tbb::parallel_for(int64_t{0}, (n + kChunk - 1) / kChunk, [&](int64_t i) {
    const int64_t b = i * kChunk;
    unary_run(fn, x + b, y + b, std::min(kChunk, n - b));
  });
}

void binary_run(BinaryOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y,
                int64_t n, float lo, float hi) {
  HWY_DYNAMIC_DISPATCH(BinaryRun)(op, a, sa, b, sb, y, n, lo, hi);
}

float reduce_run(ReduceOp op, const float* x, int64_t n) {
  return HWY_DYNAMIC_DISPATCH(ReduceRun)(op, x, n);
}

void reduce_rows(ReduceOp op, const float* x, float* acc, int64_t n, bool first) {
  HWY_DYNAMIC_DISPATCH(ReduceRows)(op, x, acc, n, first);
}

void reduce_finish(ReduceOp op, float* acc, int64_t n, int64_t count) {
  if (op == ReduceOp::kMean) {
    const float inv = 1.0f / static_cast<float>(std::max<int64_t>(count, 1));
    for (int64_t i = 0; i < n; ++i) acc[i] *= inv;
  } else if (op == ReduceOp::kL2) {
    for (int64_t i = 0; i < n; ++i) acc[i] = std::sqrt(acc[i]);
  } else if (op == ReduceOp::kLogSum) {
    for (int64_t i = 0; i < n; ++i) acc[i] = std::log(acc[i]);
  }
}

void layer_norm_run(const float* x, int64_t n, const float* scale, const float* bias, float eps,
                    float* y) {
  HWY_DYNAMIC_DISPATCH(LayerNormRun)(x, n, scale, bias, eps, y);
}

void norm_moments(const float* x, int64_t n, float eps, float* mean, float* inv_std) {
  HWY_DYNAMIC_DISPATCH(NormMoments)(x, n, eps, mean, inv_std);
}

void channel_layer_norm(const float* x, int64_t c, int64_t hw, int64_t p0, int64_t p1,
                        const float* scale, const float* bias, float eps, bool nhwc, float* y,
                        float* tile) {
  HWY_DYNAMIC_DISPATCH(ChannelLayerNorm)(x, c, hw, p0, p1, scale, bias, eps, nhwc, y, tile);
}

int64_t channel_layer_norm_tile_floats(int64_t c) {
  // The dispatched target's vector, not HWY_MAX_BYTES here (the static target's, narrower).
  return HWY_DYNAMIC_DISPATCH(ChannelLayerNormTileFloats)(c);
}

void scale_shift_run(const float* x, int64_t n, float a, float b, float* y) {
  HWY_DYNAMIC_DISPATCH(ScaleShiftRun)(x, n, a, b, y);
}

void softmax_run(const float* x, float* y, int64_t n, bool log) {
  HWY_DYNAMIC_DISPATCH(SoftmaxRun)(x, y, n, log);
}

void lrn_scale_run(const float* s, const float* x, int64_t n, float k, float a, float beta,
                   float* y) {
  HWY_DYNAMIC_DISPATCH(LrnScaleRun)(s, x, n, k, a, beta, y);
}

void transpose_2d(const float* src, int64_t lds, float* dst, int64_t ldd, int64_t rows,
                  int64_t cols) {
  HWY_DYNAMIC_DISPATCH(Transpose2D)(src, lds, dst, ldd, rows, cols);
}

}  // namespace tessera::cpu
#endif  // HWY_ONCE
