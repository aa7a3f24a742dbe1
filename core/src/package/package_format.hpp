// What the package writer and reader share beyond the schema: the weight alignment and texts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tessera::package_detail {

// Weight offsets, and the start of the weight area in the file, are multiples of this: a mapped
// package hands kernels tensors aligned for any SIMD width in use.
inline constexpr size_t kWeightAlignment = 64;

inline size_t align_up(size_t n) {
  return (n + kWeightAlignment - 1) / kWeightAlignment * kWeightAlignment;
}

inline std::string abi_text(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace tessera::package_detail
