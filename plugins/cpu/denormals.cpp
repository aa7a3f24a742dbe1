// Flush-to-zero control per thread (see denormals.hpp).
#include "denormals.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace tessera::cpu {
namespace {

#if defined(__x86_64__) || defined(__i386__)
constexpr uint64_t kFlushZero = 0x8000;       // MXCSR.FTZ: subnormal results become 0
constexpr uint64_t kDenormalsZero = 0x0040;   // MXCSR.DAZ: subnormal operands read as 0
#elif defined(__aarch64__)
constexpr uint64_t kFlushZero = uint64_t{1} << 24;  // FPCR.FZ: both, for single and double
#endif

}  // namespace

uint64_t float_control() {
#if defined(__x86_64__) || defined(__i386__)
  return _mm_getcsr();
#elif defined(__aarch64__)
  uint64_t fpcr = 0;
  __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
  return fpcr;
#else
  return 0;
#endif
}

void set_float_control(uint64_t bits) {
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(static_cast<unsigned int>(bits));
#elif defined(__aarch64__)
  __asm__ volatile("msr fpcr, %0" : : "r"(bits));
#else
  (void)bits;
#endif
}

uint64_t with_subnormals_flushed(uint64_t bits) {
#if defined(__x86_64__) || defined(__i386__)
  return bits | kFlushZero | kDenormalsZero;
#elif defined(__aarch64__)
  return bits | kFlushZero;
#else
  return bits;
#endif
}

}  // namespace tessera::cpu
