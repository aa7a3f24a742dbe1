// Highway helpers for the kernels: loads and stores of the first n lanes of a vector that touch
// nothing past them. Included once per target (inside foreach_target.h's passes), like
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

}  // namespace HWY_NAMESPACE
}  // namespace tessera::cpu
HWY_AFTER_NAMESPACE();

#endif  // TESSERA_CPU_PARTIAL_VECTORS_INL_H_
