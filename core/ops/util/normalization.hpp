// Shared pieces of the normalization op files (LayerNormalization, GroupNormalization,
// InstanceNormalization): the epsilon and stash_type checks, the per-channel parameter check,
// and the row normalization with its statistics. Statistics are accumulated in double so the
// oracle does not depend on summation order. Header-only for the same reason as broadcast.hpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "op.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {

// Attribute 'epsilon': finite and >= 0 (a negative one can make the variance term negative).
inline float attr_epsilon(const InferContext& ctx, float fallback = 1e-5f) {
  const float eps = attr_float(ctx, "epsilon", fallback);
  if (!std::isfinite(eps) || eps < 0.0f) {
    ctx.fail("attribute 'epsilon' = " + std::to_string(eps) + " must be finite and >= 0");
  }
  return eps;
}

// Attribute 'stash_type': the precision of the statistics. 1 (float32) is what every exporter
// writes; the kernels here accumulate in double, which is at least that precise.
inline void check_stash_type(const InferContext& ctx) {
  const int64_t stash = attr_int(ctx, "stash_type", 1);
  if (stash == 16) ctx.unsupported("attribute 'stash_type' = 16 (bfloat16) is not supported");
  if (stash != 1) {
    ctx.fail("attribute 'stash_type' = " + std::to_string(stash) +
             " is not a valid statistics type (1 = float32, 16 = bfloat16)");
  }
}

// Fails unless input i is a float32 tensor of shape [len]; `name` is the spec's input name.
inline void expect_vector_input(const InferContext& ctx, size_t i, int64_t len,
                                const std::string& name, const std::string& per_what) {
  ctx.expect_dtype(i, {DType::kFloat32});
  const Shape& s = ctx.input(i).shape;
  if (s != Shape{len}) {
    ctx.fail("input " + std::to_string(i) + " ('" + name + "') has shape " + shape_str(s) +
             "; expected [" + std::to_string(len) + "] (one per " + per_what + ")");
  }
}

// For each of `rows` contiguous rows of `len` values: y = (x - mean) / sqrt(var + epsilon), with
// the population variance. Writes the row's mean and 1/sqrt(var + epsilon) where the pointers are
// not null.
inline void normalize_rows(const float* x, float* y, int64_t rows, int64_t len, double epsilon,
                           float* mean_out = nullptr, float* inv_std_out = nullptr) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * len;
    float* yr = y + r * len;
    double sum = 0.0;
    for (int64_t i = 0; i < len; ++i) sum += xr[i];
    const double mean = len > 0 ? sum / static_cast<double>(len) : 0.0;
    double sq = 0.0;
    for (int64_t i = 0; i < len; ++i) sq += (xr[i] - mean) * (xr[i] - mean);
    const double var = len > 0 ? sq / static_cast<double>(len) : 0.0;
    const double inv_std = 1.0 / std::sqrt(var + epsilon);
    for (int64_t i = 0; i < len; ++i) yr[i] = static_cast<float>((xr[i] - mean) * inv_std);
    if (mean_out) mean_out[r] = static_cast<float>(mean);
    if (inv_std_out) inv_std_out[r] = static_cast<float>(inv_std);
  }
}

// Normalizes an [N, C, spatial] float32 tensor with statistics per (n, group of C / groups
// consecutive channels), then y = y * scale[c] + bias[c] per channel.
inline void group_normalize(const float* x, float* y, int64_t batch, int64_t channels,
                            int64_t spatial, int64_t groups, double epsilon, const float* scale,
                            const float* bias) {
  normalize_rows(x, y, batch * groups, channels / groups * spatial, epsilon);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      float* plane = y + (n * channels + c) * spatial;
      for (int64_t s = 0; s < spatial; ++s) plane[s] = plane[s] * scale[c] + bias[c];
    }
  }
}

}  // namespace tessera::ops
