// Elementwise int8 kernels (kernels/int8.hpp): the int8 Add and Mul units and QuantizeLinear from
// float, vectors widened to int32 and float, with exactly the float operations of core's
// reference kernels (divisions by the output scale, not multiplications by its inverse), so the
// bytes match on every target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/int8_elementwise.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>

#include "kernels/int8.hpp"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Element i of a byte tensor of either signedness as int32 lanes.
template <class D32>
HWY_INLINE hn::Vec<D32> LoadBytes(D32 d, const uint8_t* p, bool is_signed) {
  if (is_signed) {
    return hn::PromoteTo(d, hn::LoadU(hn::Rebind<int8_t, D32>(), reinterpret_cast<const int8_t*>(p)));
  }
  return hn::BitCast(d, hn::PromoteTo(hn::Rebind<uint32_t, D32>(),
                                      hn::LoadU(hn::Rebind<uint8_t, D32>(), p)));
}

int32_t AddOne(int32_t a, int32_t b, const Int8AddParams& p) {
  const float da = static_cast<float>(a - p.za) * p.sa;
  const float db = static_cast<float>(b - p.zb) * p.sb;
  const float v = std::min(std::max((p.mul ? da * db : da + db) / p.sy,
                                    static_cast<float>(p.lo - p.zy)),
                            static_cast<float>(p.hi - p.zy));
  return static_cast<int32_t>(std::nearbyint(v)) + p.zy;
}

void Int8Add(const uint8_t* a, const uint8_t* b, int64_t n, const Int8AddParams* pp, uint8_t* y) {
  const Int8AddParams& p = *pp;
  const hn::ScalableTag<int32_t> d;
  const hn::Rebind<float, decltype(d)> df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto za = hn::Set(d, p.za), zb = hn::Set(d, p.zb), zy = hn::Set(d, p.zy);
  const auto sa = hn::Set(df, p.sa), sb = hn::Set(df, p.sb), sy = hn::Set(df, p.sy);
  const auto lo = hn::Set(df, static_cast<float>(p.lo - p.zy));
  const auto hi = hn::Set(df, static_cast<float>(p.hi - p.zy));
  const int32_t b0 = p.b_signed ? static_cast<int8_t>(b[0]) : b[0];
  const auto b_one = hn::Set(d, b0);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto da = hn::Mul(hn::ConvertTo(df, hn::Sub(LoadBytes(d, a + i, p.a_signed), za)), sa);
    const auto bv = p.b_scalar ? b_one : LoadBytes(d, b + i, p.b_signed);
    const auto db = hn::Mul(hn::ConvertTo(df, hn::Sub(bv, zb)), sb);
    const auto v = hn::Min(hn::Max(hn::Div(p.mul ? hn::Mul(da, db) : hn::Add(da, db), sy), lo), hi);
    const auto r = hn::Add(hn::NearestInt(v), zy);
    if (p.y_signed) {
      const hn::Rebind<int8_t, decltype(d)> d8;
      hn::StoreU(hn::DemoteTo(d8, r), d8, reinterpret_cast<int8_t*>(y + i));
    } else {
      const hn::Rebind<uint8_t, decltype(d)> d8;
      hn::StoreU(hn::DemoteTo(d8, r), d8, y + i);
    }
  }
  for (; i < n; ++i) {
    const int32_t av = p.a_signed ? static_cast<int8_t>(a[i]) : a[i];
    const int64_t bi = p.b_scalar ? 0 : i;
    const int32_t bv = p.b_signed ? static_cast<int8_t>(b[bi]) : b[bi];
    y[i] = static_cast<uint8_t>(AddOne(av, bv, p));
  }
}

// y = saturate(nearbyint(x / scale) + zero), NaN to lo: core's QuantizeLinear.
void Quantize(const float* x, int64_t n, float scale, int32_t zero, int32_t lo, int32_t hi,
              bool is_signed, uint8_t* y) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<int32_t, decltype(df)> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const auto s = hn::Set(df, scale);
  const auto zv = hn::Set(d, zero), lov = hn::Set(d, lo);
  const auto flo = hn::Set(df, static_cast<float>(lo - zero));
  const auto fhi = hn::Set(df, static_cast<float>(hi - zero));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = hn::Div(hn::LoadU(df, x + i), s);
    const auto r = hn::Add(hn::NearestInt(hn::Min(hn::Max(v, flo), fhi)), zv);
    const auto q = hn::IfThenElse(hn::RebindMask(d, hn::IsNaN(v)), lov, r);
    if (is_signed) {
      const hn::Rebind<int8_t, decltype(d)> d8;
      hn::StoreU(hn::DemoteTo(d8, q), d8, reinterpret_cast<int8_t*>(y + i));
    } else {
      const hn::Rebind<uint8_t, decltype(d)> d8;
      hn::StoreU(hn::DemoteTo(d8, q), d8, y + i);
    }
  }
  for (; i < n; ++i) {
    const float q = std::nearbyint(x[i] / scale) + static_cast<float>(zero);
    const float c = q >= static_cast<float>(lo) ? std::min(q, static_cast<float>(hi))
                                                : static_cast<float>(lo);
    y[i] = static_cast<uint8_t>(static_cast<int32_t>(c));
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace tessera::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessera::cpu {

HWY_EXPORT(Int8Add);
HWY_EXPORT(Quantize);

void int8_add(const uint8_t* a, const uint8_t* b, int64_t n, const Int8AddParams& p, uint8_t* y) {
  HWY_DYNAMIC_DISPATCH(Int8Add)(a, b, n, &p, y);
}

void int8_quantize(const float* x, int64_t n, float scale, int32_t zero, int32_t lo, int32_t hi,
                   bool is_signed, uint8_t* y) {
  HWY_DYNAMIC_DISPATCH(Quantize)(x, n, scale, zero, lo, hi, is_signed, y);
}

}  // namespace tessera::cpu
#endif  // HWY_ONCE
