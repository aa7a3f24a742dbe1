// Subnormal floats flushed to zero in every thread that runs the cpu plugin's kernels.
//
// A subnormal operand or result makes x86 and many Arm cores take a microcode assist per
// operation: a detector whose head carries tens of thousands of subnormal activations ran its
// convolutions 4x slower than on normal values. ONNX Runtime, OpenVINO, MNN and ncnn flush them
// too. The cost is accuracy below about 1.2e-38, which no network's output depends on.
#pragma once

#include <cstdint>

namespace tessera::cpu {

// The thread's floating-point control bits that matter here (x86 MXCSR, AArch64 FPCR); 0 where
// the target has neither.
uint64_t float_control();
void set_float_control(uint64_t bits);
// `bits` with flush-to-zero (and, on x86, denormals-are-zero) set.
uint64_t with_subnormals_flushed(uint64_t bits);

// Sets the calling thread's flush bits for its lifetime and restores what it found.
class FlushSubnormals {
 public:
  FlushSubnormals() : saved_(float_control()) { set_float_control(with_subnormals_flushed(saved_)); }
  ~FlushSubnormals() { set_float_control(saved_); }
  FlushSubnormals(const FlushSubnormals&) = delete;
  FlushSubnormals& operator=(const FlushSubnormals&) = delete;

 private:
  uint64_t saved_;
};

}  // namespace tessera::cpu
