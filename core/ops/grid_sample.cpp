// GridSample (opset 16: 4-D, modes bilinear / nearest / bicubic; opset 20+: any rank, modes
// linear / nearest / cubic): Y[n, c, p] samples X[n, c] at the grid's normalised coordinates
// (grid[n, p, :] lists them innermost dim first, x then y then z), padding_mode zeros / border /
// reflection, align_corners 0 / 1. Semantics as the ONNX reference and PyTorch's grid_sample:
// nearest rounds half to even; an out-of-range coordinate is clamped (border) or reflected
// (reflection) before the taps are taken (cubic with border: only the taps), and each tap is
// padded again; cubic is Keys' with
// a = -0.75; N-D interpolation is the product of the per-dim weights. float32.
#include <algorithm>
#include <cmath>
#include <vector>

#include "op.hpp"

namespace tessera::ops {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

struct Attrs {
  Mode mode = Mode::kLinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
};

Attrs read_attrs(const InferContext& ctx) {
  Attrs a;
  const std::string mode =
      ctx.node.attrs.get_string("mode", ctx.opset >= 20 ? "linear" : "bilinear");
  if (mode == "nearest") {
    a.mode = Mode::kNearest;
  } else if (mode == (ctx.opset >= 20 ? "linear" : "bilinear")) {
    a.mode = Mode::kLinear;
  } else if (mode == (ctx.opset >= 20 ? "cubic" : "bicubic")) {
    a.mode = Mode::kCubic;
  } else {
    ctx.fail("mode '" + mode + "' is not one of opset " + std::to_string(ctx.opset) + "'s modes");
  }
  const std::string padding = ctx.node.attrs.get_string("padding_mode", "zeros");
  if (padding == "zeros") {
    a.padding = Padding::kZeros;
  } else if (padding == "border") {
    a.padding = Padding::kBorder;
  } else if (padding == "reflection") {
    a.padding = Padding::kReflection;
  } else {
    ctx.fail("padding_mode '" + padding + "' is not zeros, border or reflection");
  }
  a.align_corners = ctx.node.attrs.get_int("align_corners", 0) != 0;
  return a;
}

void infer_grid_sample(InferContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(0, {DType::kFloat32});
  ctx.expect_dtype(1, {DType::kFloat32});
  const Shape& x = ctx.input(0).shape;
  const Shape& grid = ctx.input(1).shape;
  const int64_t r = static_cast<int64_t>(x.size()) - 2;
  if (r < 1 || grid.size() != x.size()) {
    ctx.fail("X " + shape_str(x) + " and grid " + shape_str(grid) +
             " must have the same rank, at least 3");
  }
  if (ctx.opset < 20 && r != 2) ctx.fail("GridSample takes 4-D inputs before opset 20");
  if (grid[0] != x[0] || grid.back() != r) {
    ctx.fail("grid " + shape_str(grid) + " must be [N, ..., " + std::to_string(r) + "] for X " +
             shape_str(x));
  }
  read_attrs(ctx);
  for (size_t d = 2; d < x.size(); ++d) {
    if (x[d] == 0 && shape_numel(grid) != 0) {
      ctx.fail("X " + shape_str(x) + " has an empty spatial dim to sample from");
    }
  }
  Shape y = {x[0], x[1]};
  y.insert(y.end(), grid.begin() + 1, grid.end() - 1);
  ctx.outputs[0] = {DType::kFloat32, y};
}

// Reflects x into [lo, hi] by folding it at the borders as often as needed.
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0.0 || !std::isfinite(x)) return lo;
  // Folds counted in double (a coordinate of 1e30 has more than 2^63 of them); the rest clamped
  // into the range, which rounding at such sizes can leave.
  if (x < lo) {
    const double dx = lo - x, folds = std::floor(dx / range);
    const double rest = std::clamp(dx - folds * range, 0.0, range);
    return std::fmod(folds, 2.0) == 0.0 ? lo + rest : hi - rest;
  }
  if (x > hi) {
    const double dx = x - hi, folds = std::floor(dx / range);
    const double rest = std::clamp(dx - folds * range, 0.0, range);
    return std::fmod(folds, 2.0) == 0.0 ? hi - rest : lo + rest;
  }
  return x;
}

// Keys' cubic convolution weights (a = -0.75) of the taps at -1, 0, 1, 2 for fraction t.
void cubic_weights(double t, double w[4]) {
  constexpr double a = -0.75;
  auto near = [](double s) { return ((a + 2) * s - (a + 3)) * s * s + 1; };       // |s| <= 1
  auto far = [](double s) { return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a; };  // 1 < |s| < 2
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

struct Tap {
  int64_t index = 0;  // into the dim, after padding; -1: a zero (zeros padding)
  double weight = 0.0;
};

void compute_grid_sample(ComputeContext& ctx) {
  const InferContext ictx = context_of_constants(ctx);
  const Attrs a = read_attrs(ictx);
  const Tensor& xt = ctx.input(0);
  const Tensor& gt = ctx.input(1);
  const Shape& xs = xt.shape();
  const int64_t r = static_cast<int64_t>(xs.size()) - 2;
  const int64_t n_batch = xs[0], channels = xs[1];
  std::vector<int64_t> dims(xs.begin() + 2, xs.end());
  int64_t plane = 1;
  for (int64_t d : dims) plane *= d;
  const int64_t points = shape_numel(gt.shape()) / std::max<int64_t>(1, n_batch * r);
  const float* x = xt.data<float>();
  const float* grid = gt.data<float>();
  float* y = ctx.outputs[0].data<float>();
  std::vector<std::vector<Tap>> taps(static_cast<size_t>(r));
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t p = 0; p < points; ++p) {
      const float* g = grid + (n * points + p) * r;
      for (int64_t i = 0; i < r; ++i) {
        const double d = static_cast<double>(dims[static_cast<size_t>(i)]);
        const double lo = a.align_corners ? 0.0 : -0.5;
        const double hi = a.align_corners ? d - 1.0 : d - 0.5;
        const double v = g[r - 1 - i];  // the grid lists the innermost dim first
        double c = a.align_corners ? (v + 1.0) / 2.0 * (d - 1.0) : ((v + 1.0) * d - 1.0) / 2.0;
        // A NaN coordinate samples as one left of the range; without reflection, one far outside
        // it is brought within a few pixels of it (its taps are padding either way), so the
        // casts below stay defined (reflection folds any coordinate into the range).
        if (std::isnan(c)) c = lo - 2.0;
        if (a.padding != Padding::kReflection) c = std::clamp(c, lo - 8.0, hi + 8.0);
        if (a.mode == Mode::kNearest) c = std::nearbyint(c);
        if (c < lo || c > hi) {
          // Cubic with border padding clamps only the taps, as PyTorch's grid_sample and ONNX
          // Runtime do (the ONNX reference implementation clamps the coordinate first; no
          // backend test covers the pair, and exported models were trained with PyTorch's).
          if (a.padding == Padding::kBorder && a.mode != Mode::kCubic) {
            c = std::clamp(c, 0.0, d - 1.0);
          }
          if (a.padding == Padding::kReflection) c = reflect(c, lo, hi);
        }
        std::vector<Tap>& t = taps[static_cast<size_t>(i)];
        t.clear();
        if (a.mode == Mode::kNearest) {
          t.push_back({static_cast<int64_t>(c), 1.0});
        } else if (a.mode == Mode::kLinear) {
          const double f = std::floor(c);
          t.push_back({static_cast<int64_t>(f), 1.0 - (c - f)});
          t.push_back({static_cast<int64_t>(f) + 1, c - f});
        } else {
          const double f = std::floor(c);
          double w[4];
          cubic_weights(c - f, w);
          for (int k = 0; k < 4; ++k) t.push_back({static_cast<int64_t>(f) - 1 + k, w[k]});
        }
        // Each tap padded on its own (a cubic tap may fall outside even after the clamp).
        const int64_t size = dims[static_cast<size_t>(i)];
        for (Tap& tap : t) {
          if (tap.index >= 0 && tap.index < size) continue;
          if (a.padding == Padding::kZeros) {
            tap.index = -1;
          } else if (a.padding == Padding::kBorder) {
            tap.index = std::clamp<int64_t>(tap.index, 0, size - 1);
          } else {
            tap.index = static_cast<int64_t>(reflect(static_cast<double>(tap.index), lo, hi));
            tap.index = std::clamp<int64_t>(tap.index, 0, size - 1);
          }
        }
      }
      // The product of the per-dim taps, as one odometer.
      for (int64_t ch = 0; ch < channels; ++ch) {
        const float* src = x + (n * channels + ch) * plane;
        std::vector<size_t> at(static_cast<size_t>(r), 0);
        double sum = 0.0;
        for (;;) {
          double w = 1.0;
          int64_t offset = 0;
          bool zero = false;
          for (int64_t i = 0; i < r; ++i) {
            const Tap& tap = taps[static_cast<size_t>(i)][at[static_cast<size_t>(i)]];
            if (tap.index < 0) zero = true;
            w *= tap.weight;
            offset = offset * dims[static_cast<size_t>(i)] + tap.index;
          }
          if (!zero) sum += w * static_cast<double>(src[offset]);
          int64_t i = r - 1;
          for (; i >= 0; --i) {
            if (++at[static_cast<size_t>(i)] < taps[static_cast<size_t>(i)].size()) break;
            at[static_cast<size_t>(i)] = 0;
          }
          if (i < 0) break;
        }
        y[(n * channels + ch) * points + p] = static_cast<float>(sum);
      }
    }
  }
}

}  // namespace

TESSERA_REGISTER_OP("GridSample", infer_grid_sample, compute_grid_sample);

}  // namespace tessera::ops
