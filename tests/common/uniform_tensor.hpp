// A float32 tensor of seeded uniform values in [lo, hi), for op tests whose oracle is another
// kernel run on the same inputs (so the values need no meaning, only variety).
#pragma once

#include <cstdint>
#include <random>

#include "tessera/tensor.hpp"

namespace tessera::test_util {

inline Tensor uniform_tensor(Shape shape, uint32_t seed, float lo, float hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Tensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(gen);
  return t;
}

}  // namespace tessera::test_util
