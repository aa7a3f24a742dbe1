// The first difference between a run's outputs and the oracle's, for the soak benchmark and the
// concurrency tests, which check outputs from many threads and report one line each.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/tensor.hpp"

namespace tessera {

// "" when `got` matches `want` within 1e-4 relative (float outputs: the plugins' summation order
// differs from the reference kernels'; others exactly), else what differs first.
inline std::string first_mismatch(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  if (got.size() != want.size()) {
    return std::to_string(got.size()) + " outputs, want " + std::to_string(want.size());
  }
  for (size_t o = 0; o < want.size(); ++o) {
    if (got[o].shape() != want[o].shape() || got[o].dtype() != want[o].dtype()) {
      return "output " + std::to_string(o) + ": " + dtype_name(got[o].dtype()) + " " +
             shape_str(got[o].shape()) + ", want " + dtype_name(want[o].dtype()) + " " +
             shape_str(want[o].shape());
    }
    if (want[o].dtype() != DType::kFloat32) {
      if (std::memcmp(got[o].raw(), want[o].raw(), want[o].nbytes()) != 0) {
        return "output " + std::to_string(o) + " differs";
      }
      continue;
    }
    const float* g = got[o].data<float>();
    const float* w = want[o].data<float>();
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      if (!(std::fabs(g[i] - w[i]) <= 1e-4f * std::max(1.0f, std::fabs(w[i])))) {
        return "output " + std::to_string(o) + " element " + std::to_string(i) + ": " +
               std::to_string(g[i]) + ", want " + std::to_string(w[i]);
      }
    }
  }
  return "";
}

}  // namespace tessera
