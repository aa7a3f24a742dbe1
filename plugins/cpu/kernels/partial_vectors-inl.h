// Highway helpers for the kernels: loads and stores of the first n lanes of a vector that touch
// nothing past them, and the choice of the widest vector a row fills. Included once per target (inside foreach_target.h's passes), like
// Highway's own -inl headers.
#if defined(TESSERA_CPU_PARTIAL_VECTORS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_CPU_PARTIAL_VECTORS_INL_H_
#undef TESSERA_CPU_PARTIAL_VECTORS_INL_H_
#else
#define TESSERA_CPU_PARTIAL_VECTORS_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Lanes [0, n) of a vector loaded from / stored to p (n <= lanes; whole vectors for n >= lanes).
// x86 AVX2 and AVX-512 mask the access in hardware; elsewhere (where a masked store reads and
// writes back the lanes past n, racing with the thread that owns them) through a buffer. A
// variable-length copy of a tile's row out of a buffer compiles to `rep movs`, which costs more
// than the row's arithmetic at small K.
template <class D>
HWY_INLINE hn::Vec<D> LoadFirst(D d, const float* HWY_RESTRICT p, int64_t n) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  if (n >= lanes) return hn::LoadU(d, p);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  return hn::MaskedLoad(hn::FirstN(d, static_cast<size_t>(n)), d, p);
#else
  alignas(64) float buf[HWY_MAX_BYTES / sizeof(float)] = {};
  for (int64_t i = 0; i < n; ++i) buf[i] = p[i];
  return hn::Load(d, buf);
#endif
}

template <class D>
HWY_INLINE void StoreFirst(hn::Vec<D> v, D d, float* HWY_RESTRICT p, int64_t n) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  if (n >= lanes) return hn::StoreU(v, d, p);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  hn::BlendedStore(v, hn::FirstN(d, static_cast<size_t>(n)), d, p);
#else
  alignas(64) float buf[HWY_MAX_BYTES / sizeof(float)];
  hn::Store(v, d, buf);
  for (int64_t i = 0; i < n; ++i) p[i] = buf[i];
#endif
}

// Runs fn(d) with the widest tag of the target's full vector, 8, 4 (and 1 where kMinLanes is 1)
// lanes whose lanes n fills, and returns true; false, calling nothing, when n is narrower than
// kMinLanes or no such tag exists on this target. A row of n floats then runs in whole vectors,
// the last overlapping the one before, and never needs a partial load or store.
template <int kMinLanes, class Fn>
HWY_INLINE bool ForWidestFit(int64_t n, const Fn& fn) {
  static_assert(kMinLanes == 1 || kMinLanes == 4, "smallest lane count: 1 or 4");
  const hn::ScalableTag<float> full;
  const hn::CappedTag<float, 8> eight;
  const hn::CappedTag<float, 4> four;
  if (n >= static_cast<int64_t>(hn::Lanes(full)) &&
      static_cast<int64_t>(hn::Lanes(full)) >= kMinLanes) {
    fn(full);
  } else if (n >= 8 && hn::Lanes(eight) == 8) {
    fn(eight);
  } else if (n >= 4 && hn::Lanes(four) == 4) {
    fn(four);
  } else if constexpr (kMinLanes == 1) {
    if (n <= 0) return false;
    fn(hn::CappedTag<float, 1>());
  } else {
    return false;
  }
  return true;
}

}  // namespace HWY_NAMESPACE
}  // namespace tessera::cpu
HWY_AFTER_NAMESPACE();

#endif  // TESSERA_CPU_PARTIAL_VECTORS_INL_H_
