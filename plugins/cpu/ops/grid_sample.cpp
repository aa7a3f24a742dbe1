// GridSample on 4-D float32 inputs (spatial transformers, optical-flow warps, deformable
// attention): per output pixel the taps of both axes are worked out once (nearest: 1, linear:
// 2, cubic: 4 per axis; padded per tap: zeros, border, reflection) and then applied to every
// channel. Coordinates in double, as core's reference kernel computes them, so nearest's
// half-to-even rounding sees the same values.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

struct Attrs {
  Mode mode = Mode::kLinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
};

// The attributes, or why they are not supported ("" on success).
std::string read_attrs(const RegionView& region, const NodeView& node, Attrs* a) {
  const bool v20 = region.opset() >= 20;
  const std::string mode = node.attr_string("mode", v20 ? "linear" : "bilinear");
  if (mode == "nearest") {
    a->mode = Mode::kNearest;
  } else if (mode == (v20 ? "linear" : "bilinear")) {
    a->mode = Mode::kLinear;
  } else if (mode == (v20 ? "cubic" : "bicubic")) {
    a->mode = Mode::kCubic;
  } else {
    return "mode '" + mode + "' is not implemented";
  }
  const std::string padding = node.attr_string("padding_mode", "zeros");
  if (padding == "zeros") {
    a->padding = Padding::kZeros;
  } else if (padding == "border") {
    a->padding = Padding::kBorder;
  } else if (padding == "reflection") {
    a->padding = Padding::kReflection;
  } else {
    return "padding_mode '" + padding + "' is not implemented";
  }
  a->align_corners = node.attr_int("align_corners", 0) != 0;
  return "";
}

// x folded into [lo, hi] at its borders as often as needed.
double fold_into(double x, double lo, double hi) {
  const double span = hi - lo;
  if (span <= 0.0 || !std::isfinite(x)) return lo;
  const bool below = x < lo;
  if (!below && x <= hi) return x;
  // Folds counted in double (a coordinate of 1e30 has more than 2^63 of them).
  const double past = below ? lo - x : x - hi, folds = std::floor(past / span);
  const double rest = std::clamp(past - folds * span, 0.0, span);
  const bool back = std::fmod(folds, 2.0) == 0.0;  // even: back from the same border
  return below == back ? lo + rest : hi - rest;
}

// Up to 4 taps of one axis: index into the axis (-1 for a zero) and weight.
struct AxisTaps {
  int64_t index[4];
  float weight[4];
  int count = 0;
};

AxisTaps axis_taps(double v, int64_t size, const Attrs& a) {
  const double d = static_cast<double>(size);
  const double lo = a.align_corners ? 0.0 : -0.5, hi = a.align_corners ? d - 1.0 : d - 0.5;
  double c = a.align_corners ? (v + 1.0) / 2.0 * (d - 1.0) : ((v + 1.0) * d - 1.0) / 2.0;
  // NaN samples as one left of the range; without reflection (which folds any coordinate into
  // the range) far outside is brought within a few pixels, the taps being padding either way,
  // so the casts below stay defined (as in core's kernel).
  if (std::isnan(c)) c = lo - 2.0;
  if (a.padding != Padding::kReflection) c = std::clamp(c, lo - 8.0, hi + 8.0);
  if (a.mode == Mode::kNearest) c = std::nearbyint(c);
  if (c < lo || c > hi) {
    // Cubic with border padding clamps only its taps (PyTorch, ONNX Runtime; core's kernel too).
    if (a.padding == Padding::kBorder && a.mode != Mode::kCubic) c = std::clamp(c, 0.0, d - 1.0);
    if (a.padding == Padding::kReflection) c = fold_into(c, lo, hi);
  }
  AxisTaps t;
  const double f = std::floor(c), frac = c - f;
  const int64_t base = static_cast<int64_t>(f);
  if (a.mode == Mode::kNearest) {
    t.index[0] = static_cast<int64_t>(c);
    t.weight[0] = 1.0f;
    t.count = 1;
  } else if (a.mode == Mode::kLinear) {
    t.index[0] = base;
    t.index[1] = base + 1;
    t.weight[0] = static_cast<float>(1.0 - frac);
    t.weight[1] = static_cast<float>(frac);
    t.count = 2;
  } else {
    // Keys' cubic convolution, a = -0.75, at distances 1 + frac, frac, 1 - frac, 2 - frac.
    constexpr double k = -0.75;
    auto inner = [](double s) { return ((k + 2) * s - (k + 3)) * s * s + 1; };
    auto outer = [](double s) { return ((k * s - 5 * k) * s + 8 * k) * s - 4 * k; };
    const double w[4] = {outer(frac + 1), inner(frac), inner(1 - frac), outer(2 - frac)};
    for (int i = 0; i < 4; ++i) {
      t.index[i] = base - 1 + i;
      t.weight[i] = static_cast<float>(w[i]);
    }
    t.count = 4;
  }
  for (int i = 0; i < t.count; ++i) {
    int64_t& at = t.index[i];
    if (at >= 0 && at < size) continue;
    if (a.padding == Padding::kZeros) {
      at = -1;
    } else if (a.padding == Padding::kBorder) {
      at = std::clamp<int64_t>(at, 0, size - 1);
    } else {
      at = std::clamp<int64_t>(static_cast<int64_t>(fold_into(static_cast<double>(at), lo, hi)), 0,
                               size - 1);
    }
  }
  return t;
}

}  // namespace

std::string query_grid_sample(const RegionView& region, const NodeView& node) {
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* grid = node.input(1);
  if (!is_f32(x) || !is_f32(grid) || !is_f32(node.output(0))) return "only float32 is implemented";
  if (x->rank != 4 || grid->rank != 4 || grid->dims[3] != 2)
    return "only 4-D inputs are implemented";
  if (numel(*x) == 0 || numel(*grid) == 0) return "empty inputs are not implemented";
  Attrs a;
  return read_attrs(region, node, &a);
}

Step build_grid_sample(BuildContext& ctx) {
  Attrs a;
  read_attrs(ctx.region, ctx.node, &a);
  const tsr_tensor* x = ctx.node.input(0);
  const tsr_tensor* grid = ctx.node.input(1);
  const int64_t n = x->dims[0], channels = x->dims[1], h = x->dims[2], w = x->dims[3];
  const int64_t ho = grid->dims[1], wo = grid->dims[2];
  const int32_t ix = ctx.node.input_index(0), ig = ctx.node.input_index(1), out = ctx.output;
  return [=](std::vector<float*>& v) {
    tbb::parallel_for(int64_t{0}, n * ho, [&](int64_t row) {
      const int64_t b = row / ho, oy = row % ho;
      const float* src = v[ix] + b * channels * h * w;
      float* dst = v[out] + b * channels * ho * wo + oy * wo;
      for (int64_t ox = 0; ox < wo; ++ox) {
        const float* g = v[ig] + ((b * ho + oy) * wo + ox) * 2;
        const AxisTaps tx = axis_taps(g[0], w, a), ty = axis_taps(g[1], h, a);
        // The pixel's taps as (offset in a plane, weight), zeros left out.
        int64_t offset[16];
        float weight[16];
        int taps = 0;
        for (int j = 0; j < ty.count; ++j) {
          for (int i = 0; i < tx.count; ++i) {
            if (ty.index[j] < 0 || tx.index[i] < 0) continue;
            offset[taps] = ty.index[j] * w + tx.index[i];
            weight[taps++] = ty.weight[j] * tx.weight[i];
          }
        }
        for (int64_t ch = 0; ch < channels; ++ch) {
          const float* plane = src + ch * h * w;
          float sum = 0.0f;
          for (int k = 0; k < taps; ++k) sum += weight[k] * plane[offset[k]];
          dst[ch * ho * wo + ox] = sum;
        }
      }
    });
  };
}

}  // namespace tessera::cpu
