// Shared pieces of the recurrent ops (RNN, GRU, LSTM): attributes (direction, hidden_size, layout,
// clip, activations with their alpha/beta), input shape checks, and the walk over directions,
// batch entries and time steps that each op's cell plugs into. Float32; the cells compute in
// float as ONNX Runtime does. Header-only for the same reason as broadcast.hpp.
//
// Layout 0: X [seq, batch, input], Y [seq, num_directions, batch, hidden], states
// [num_directions, batch, hidden]; layout 1 (opset 14): X [batch, seq, input], Y [batch, seq,
// num_directions, hidden], states [batch, num_directions, hidden]. sequence_lens shortens a batch
// entry's sequence: its Y rows past the end are 0 and its final state is the one at its end
// (a reverse direction starts at its last valid step).
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "op.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {

using RecurrentActivation = std::function<float(float)>;

// One of ONNX's recurrent activation names with its alpha/beta (taken from the attribute lists
// in order, for the functions that have them); fails naming the node for an unknown name.
inline RecurrentActivation recurrent_activation(const InferContext& ctx, const std::string& name,
                                                const std::vector<float>& alphas,
                                                const std::vector<float>& betas, size_t* next_alpha,
                                                size_t* next_beta) {
  auto alpha = [&](float fallback) {
    return *next_alpha < alphas.size() ? alphas[(*next_alpha)++] : fallback;
  };
  auto beta = [&](float fallback) {
    return *next_beta < betas.size() ? betas[(*next_beta)++] : fallback;
  };
  if (name == "Sigmoid") return [](float x) { return 1.0f / (1.0f + std::exp(-x)); };
  if (name == "Tanh") return [](float x) { return std::tanh(x); };
  if (name == "Relu") return [](float x) { return std::max(x, 0.0f); };
  if (name == "Softsign") return [](float x) { return x / (1.0f + std::fabs(x)); };
  if (name == "Softplus") return [](float x) { return std::log1p(std::exp(x)); };
  if (name == "LeakyRelu") {
    const float a = alpha(0.01f);
    return [a](float x) { return x >= 0.0f ? x : a * x; };
  }
  if (name == "ThresholdedRelu") {
    const float a = alpha(1.0f);
    return [a](float x) { return x > a ? x : 0.0f; };
  }
  if (name == "Elu") {
    const float a = alpha(1.0f);
    return [a](float x) { return x >= 0.0f ? x : a * (std::exp(x) - 1.0f); };
  }
  if (name == "Affine") {
    const float a = alpha(1.0f), b = beta(0.0f);
    return [a, b](float x) { return a * x + b; };
  }
  if (name == "ScaledTanh") {
    const float a = alpha(1.0f), b = beta(1.0f);
    return [a, b](float x) { return a * std::tanh(b * x); };
  }
  if (name == "HardSigmoid") {
    const float a = alpha(0.2f), b = beta(0.5f);
    return [a, b](float x) { return std::min(1.0f, std::max(0.0f, a * x + b)); };
  }
  ctx.fail("attribute 'activations' names '" + name +
           "', which is not a recurrent activation (Sigmoid, Tanh, Relu, LeakyRelu, "
           "ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus, Affine)");
}

struct RecurrentSpec {
  int64_t directions = 1;  // 2 for bidirectional
  bool reverse_only = false;
  int64_t hidden = 0;
  int64_t layout = 0;
  float clip = 0.0f;  // 0 = none
  int64_t seq = 0, batch = 0, input = 0;
  // Per direction, the op's activations in order (LSTM: f, g, h; GRU: f, g; RNN: f).
  std::vector<std::vector<RecurrentActivation>> activations;
};

// Reads and checks the attributes and the shapes of X, W, R, B, sequence_lens and the initial
// states (inputs 5.. by `state_inputs`, e.g. {5, 6} for LSTM's initial_h and initial_c) for an op
// with `gates` gates and these default activations; fails naming the node and what is wrong.
inline RecurrentSpec recurrent_spec(const InferContext& ctx, int64_t gates,
                                    const std::vector<std::string>& default_activations,
                                    const std::vector<size_t>& state_inputs) {
  RecurrentSpec s;
  const std::string direction = attr_string(ctx, "direction", "forward");
  if (direction == "bidirectional") {
    s.directions = 2;
  } else if (direction == "reverse") {
    s.reverse_only = true;
  } else if (direction != "forward") {
    ctx.fail("attribute 'direction' = '" + direction +
             "' must be forward, reverse or bidirectional");
  }
  s.layout = ctx.opset >= 14 ? attr_int(ctx, "layout", 0) : 0;
  if (s.layout != 0 && s.layout != 1) ctx.fail("attribute 'layout' must be 0 or 1");
  s.clip = attr_float(ctx, "clip", 0.0f);
  if (ctx.node.attrs.has("clip") && !(s.clip > 0.0f)) {
    ctx.fail("attribute 'clip' must be a positive number");
  }
  ctx.expect_dtype(0, {DType::kFloat32});
  ctx.expect_dtype(1, {DType::kFloat32});
  ctx.expect_dtype(2, {DType::kFloat32});
  const Shape& x = ctx.input(0).shape;
  if (x.size() != 3) ctx.fail("input 'X' has shape " + shape_str(x) + "; expected rank 3");
  s.seq = x[s.layout == 0 ? 0 : 1];
  s.batch = x[s.layout == 0 ? 1 : 0];
  s.input = x[2];
  const Shape& w = ctx.input(1).shape;
  if (w.size() != 3 || w[0] != s.directions || w[1] % gates != 0 || w[2] != s.input) {
    ctx.fail("input 'W' has shape " + shape_str(w) + "; expected [" + std::to_string(s.directions) +
             ", " + std::to_string(gates) + " x hidden_size, " + std::to_string(s.input) + "]");
  }
  s.hidden = w[1] / gates;
  if (ctx.node.attrs.has("hidden_size") && attr_int(ctx, "hidden_size", 0) != s.hidden) {
    ctx.fail("attribute 'hidden_size' = " + std::to_string(attr_int(ctx, "hidden_size", 0)) +
             " does not match input 'W' " + shape_str(w));
  }
  auto expect_shape = [&](size_t i, const std::string& name, const Shape& want) {
    if (!ctx.has_input(i)) return;
    ctx.expect_dtype(i, {i == 4 ? DType::kInt32 : DType::kFloat32});
    if (ctx.input(i).shape != want) {
      ctx.fail("input '" + name + "' has shape " + shape_str(ctx.input(i).shape) + "; expected " +
               shape_str(want));
    }
  };
  expect_shape(2, "R", {s.directions, gates * s.hidden, s.hidden});
  expect_shape(3, "B", {s.directions, 2 * gates * s.hidden});
  expect_shape(4, "sequence_lens", {s.batch});
  const Shape state = s.layout == 0 ? Shape{s.directions, s.batch, s.hidden}
                                    : Shape{s.batch, s.directions, s.hidden};
  for (size_t i : state_inputs) expect_shape(i, i == 5 ? "initial_h" : "initial_c", state);
  std::vector<std::string> names = attr_strings(ctx, "activations");
  const size_t per_direction = default_activations.size();
  if (names.empty()) {
    for (int64_t d = 0; d < s.directions; ++d) {
      names.insert(names.end(), default_activations.begin(), default_activations.end());
    }
  }
  if (names.size() != per_direction * static_cast<size_t>(s.directions)) {
    ctx.fail("attribute 'activations' has " + std::to_string(names.size()) + " names; expected " +
             std::to_string(per_direction * static_cast<size_t>(s.directions)));
  }
  const std::vector<float> alphas = attr_floats(ctx, "activation_alpha", {});
  const std::vector<float> betas = attr_floats(ctx, "activation_beta", {});
  size_t next_alpha = 0, next_beta = 0;
  s.activations.resize(static_cast<size_t>(s.directions));
  for (size_t i = 0; i < names.size(); ++i) {
    s.activations[i / per_direction].push_back(
        recurrent_activation(ctx, names[i], alphas, betas, &next_alpha, &next_beta));
  }
  return s;
}

// Y's and the final states' infos for the spec (Y_h and Y_c share the state shape); fails for more
// than `max_outputs` outputs (LSTM 3, GRU and RNN 2).
inline void recurrent_outputs(InferContext& ctx, const RecurrentSpec& s, size_t max_outputs) {
  if (ctx.outputs.size() > max_outputs) {
    ctx.fail("has more than " + std::to_string(max_outputs) + " outputs");
  }
  const Shape y = s.layout == 0 ? Shape{s.seq, s.directions, s.batch, s.hidden}
                                : Shape{s.batch, s.seq, s.directions, s.hidden};
  const Shape state = s.layout == 0 ? Shape{s.directions, s.batch, s.hidden}
                                    : Shape{s.batch, s.directions, s.hidden};
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    ctx.outputs[i] = {DType::kFloat32, i == 0 ? y : state};
  }
}

// Offsets into X, Y and the state tensors for the spec's layout.
struct RecurrentLayout {
  const RecurrentSpec& s;
  int64_t x(int64_t t, int64_t b) const {
    return (s.layout == 0 ? t * s.batch + b : b * s.seq + t) * s.input;
  }
  int64_t y(int64_t t, int64_t d, int64_t b) const {
    return (s.layout == 0 ? (t * s.directions + d) * s.batch + b
                          : (b * s.seq + t) * s.directions + d) *
           s.hidden;
  }
  int64_t state(int64_t d, int64_t b) const {
    return (s.layout == 0 ? d * s.batch + b : b * s.directions + d) * s.hidden;
  }
};

// The input, weights and biases a cell reads, by direction: X (layout of the spec), W [directions,
// gates H, input], R [directions, gates H, H], B [directions, 2 gates H] (Wb then Rb), optional.
struct RecurrentOperands {
  RecurrentOperands(const ComputeContext& ctx, const RecurrentSpec& spec, int64_t gates)
      : s(spec),
        rows(gates * spec.hidden),
        x(ctx.input(0).data<float>()),
        w(ctx.input(1).data<float>()),
        r(ctx.input(2).data<float>()),
        bias(ctx.has_input(3) ? ctx.input(3).data<float>() : nullptr) {}

  // out[0, gates H) = Wb (+ Rb when with_r_bias) + W x_t, for batch entry b of direction d.
  void input_gates(int64_t d, int64_t t, int64_t b, bool with_r_bias, float* out) const;
  // Row `row` of direction d's R, and its bias Rb (nullptr without B).
  const float* r_rows(int64_t d, int64_t row) const { return r + (d * rows + row) * s.hidden; }
  const float* r_bias(int64_t d) const { return bias ? bias + (2 * d + 1) * rows : nullptr; }

  const RecurrentSpec& s;
  int64_t rows;  // gates x hidden
  const float* x;
  const float* w;
  const float* r;
  const float* bias;
};

// gates[g] = sum_i x[i] * W[g][i] for each of `rows` rows of the [rows, cols] matrix W.
inline void recurrent_matvec(const float* w, int64_t rows, int64_t cols, const float* x,
                             float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    float sum = 0.0f;
    for (int64_t c = 0; c < cols; ++c) sum += w[r * cols + c] * x[c];
    out[r] += sum;
  }
}

inline void RecurrentOperands::input_gates(int64_t d, int64_t t, int64_t b, bool with_r_bias,
                                           float* out) const {
  const float* wb = bias ? bias + 2 * d * rows : nullptr;
  for (int64_t j = 0; j < rows; ++j) {
    out[j] = wb ? wb[j] + (with_r_bias ? wb[rows + j] : 0.0f) : 0.0f;
  }
  recurrent_matvec(w + d * rows * s.input, rows, s.input, x + RecurrentLayout{s}.x(t, b), out);
}

// Runs `step(d, b, t, h, c)` over every direction, batch entry and valid time step in the order
// the direction walks it, after loading the initial states (zero without them); h and c are the
// entry's state vectors (c unused by RNN and GRU). Then writes the final states to outputs 1
// (and 2), and zeroes Y rows past each entry's sequence length.
template <typename Step>
void recurrent_walk(ComputeContext& ctx, const RecurrentSpec& s, size_t initial_h, size_t initial_c,
                    Step step) {
  const RecurrentLayout at{s};
  const int32_t* lens = ctx.has_input(4) ? ctx.input(4).data<int32_t>() : nullptr;
  float* y = ctx.wants_output(0) ? ctx.outputs[0].data<float>() : nullptr;
  if (y != nullptr) std::fill(y, y + ctx.outputs[0].numel(), 0.0f);
  std::vector<float> h(static_cast<size_t>(s.hidden)), c(static_cast<size_t>(s.hidden));
  for (int64_t d = 0; d < s.directions; ++d) {
    const bool reverse = s.reverse_only || d == 1;
    for (int64_t b = 0; b < s.batch; ++b) {
      const int64_t len = lens ? std::min<int64_t>(std::max<int32_t>(lens[b], 0), s.seq) : s.seq;
      auto load = [&](size_t input, std::vector<float>& v) {
        if (ctx.has_input(input)) {
          const float* src = ctx.input(input).data<float>() + at.state(d, b);
          std::copy(src, src + s.hidden, v.begin());
        } else {
          std::fill(v.begin(), v.end(), 0.0f);
        }
      };
      load(initial_h, h);
      load(initial_c, c);
      for (int64_t i = 0; i < len; ++i) {
        const int64_t t = reverse ? len - 1 - i : i;
        step(d, b, t, h.data(), c.data());
        if (y != nullptr) std::copy(h.begin(), h.end(), y + at.y(t, d, b));
      }
      for (size_t o = 1; o <= 2; ++o) {
        if (!ctx.wants_output(o)) continue;
        const std::vector<float>& v = o == 1 ? h : c;
        std::copy(v.begin(), v.end(), ctx.outputs[o].data<float>() + at.state(d, b));
      }
    }
  }
}

// Clips a gate's pre-activation to [-clip, clip] when clip is set.
inline float recurrent_clip(const RecurrentSpec& s, float v) {
  return s.clip > 0.0f ? std::min(s.clip, std::max(-s.clip, v)) : v;
}

}  // namespace tessera::ops
