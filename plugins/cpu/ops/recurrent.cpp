// LSTM and GRU (float32) on the packed SGEMM: per direction, X times W^T for every time step at
// once (one GEMM, with the input biases as its column bias), then per step h times R^T (a GEMM of
// batch rows) and the gates pointwise with the SIMD Sigmoid / Tanh runs. W^T and R^T are packed
// once at compile time. Layouts 0 and 1, forward / reverse / bidirectional, initial states, any
// of the outputs, clip, sequence_lens (rows past an entry's length keep its state and leave Y
// zero; a reverse walk starts at the entry's last step); the default activations only (LSTM
// Sigmoid, Tanh, Tanh; GRU Sigmoid, Tanh). LSTM takes peepholes (a scalar path); GRU either
// linear_before_reset.
#include <algorithm>
#include <cmath>
#include <memory>

#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

struct RecurrentShape {
  int64_t gates = 4;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1, layout = 0;
  bool reverse_only = false;
  int64_t state(int64_t d, int64_t b) const {
    return (layout == 0 ? d * batch + b : b * directions + d) * hidden;
  }
  int64_t y(int64_t t, int64_t d, int64_t b) const {
    return (layout == 0 ? (t * directions + d) * batch + b : (b * seq + t) * directions + d) *
           hidden;
  }
  // X's rows are (t, b) in layout 0 and (b, t) in layout 1; both are one row-major matrix.
  int64_t x_row(int64_t t, int64_t b) const { return layout == 0 ? t * batch + b : b * seq + t; }
};

std::string recurrent_shape(const NodeView& node, RecurrentShape* s) {
  const bool lstm = node.op_type() == "LSTM";
  s->gates = lstm ? 4 : 3;
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* w = node.input(1);
  const tsr_tensor* r = node.input(2);
  if (!is_f32(x) || !is_f32(w) || !is_f32(r)) return "only float32 is implemented";
  if (w->data == nullptr || r->data == nullptr) return "W and R must be constants";
  const tsr_tensor* b = node.input(3);
  if (b != nullptr && constant_f32(b) == nullptr) return "B must be a float32 constant";
  const tsr_tensor* p = lstm ? node.input(7) : nullptr;
  if (p != nullptr && constant_f32(p) == nullptr) return "P must be a float32 constant";
  if (node.input(4) != nullptr && node.input(4)->dtype != TSR_DTYPE_INT32) {
    return "sequence_lens must be int32";
  }
  for (int32_t i : {5, 6}) {
    if (node.input(i) != nullptr && !is_f32(node.input(i))) return "initial states must be float32";
  }
  if (node.attr_int("input_forget", 0) != 0) return "input_forget is not implemented";
  if (node.attr_float("clip", 0.0f) < 0.0f) return "clip must be positive";
  const size_t per_direction = lstm ? 3 : 2;
  const std::vector<std::string> acts = node.attr_strings("activations", {});
  for (size_t i = 0; i < acts.size(); ++i) {
    if (acts[i] != (i % per_direction == 0 ? "Sigmoid" : "Tanh")) {
      return "only the default activations are implemented";
    }
  }
  const std::string direction = node.attr_string("direction", "forward");
  s->directions = direction == "bidirectional" ? 2 : 1;
  s->reverse_only = direction == "reverse";
  s->layout = node.attr_int("layout", 0);
  if (x->rank != 3 || w->rank != 3 || (s->layout != 0 && s->layout != 1)) {
    return "X and W must be rank 3 and layout 0 or 1";
  }
  s->seq = x->dims[s->layout == 0 ? 0 : 1];
  s->batch = x->dims[s->layout == 0 ? 1 : 0];
  s->input = x->dims[2];
  s->hidden = w->dims[1] / s->gates;
  return "";
}

// Everything packed at compile time, per direction.
struct RecurrentWeights {
  std::vector<PackedMatrix> wt, rt;      // W^T [input, gates H], R^T [H, gates H]
  std::vector<std::vector<float>> wb;    // LSTM: Wb + Rb; GRU: Wb (R's bias goes with h R^T)
  std::vector<std::vector<float>> rb;    // GRU: Rb
  std::vector<std::vector<float>> peep;  // LSTM: P [3H] (i, o, f), or empty
  GemmBlocking x_blocking, h_blocking;
  int64_t x_mr = 1, h_mr = 1;
};

// Scratch reused across runs (one execute per region at a time).
struct RecurrentScratch {
  std::vector<float> xw, hr, state, tmp, rh;
  PackedMatrix x, h, reset_h;
};

float sigmoid(float v) {
  return 1.0f / (1.0f + std::exp(-v));
}

const UnaryFn kSigmoidFn{UnaryOp::kSigmoid};
const UnaryFn kTanhFn{UnaryOp::kTanh};

std::shared_ptr<RecurrentWeights> pack_recurrent(const BuildContext& ctx, const RecurrentShape& s) {
  const NodeView& node = ctx.node;
  const int64_t H = s.hidden, G = s.gates * H;
  auto weights = std::make_shared<RecurrentWeights>();
  const Config x_config = default_gemm_config(s.seq * s.batch, G, ctx.threads);
  const Config h_config = default_gemm_config(s.batch, G, ctx.threads);
  weights->x_blocking = gemm_blocking(x_config);
  weights->h_blocking = gemm_blocking(h_config);
  // A step's h R^T is small (batch rows): below 2^16 multiply-adds it runs as one task, as
  // splitting it into the heuristic's tasks cost more than the products (a CRNN's batch-1
  // LSTM steps of 96 x 384 spent ~8 us each, mostly scheduling).
  if (s.batch * G * H < (int64_t{1} << 16)) {
    weights->h_blocking.mc = std::max<int64_t>(weights->h_blocking.mc, s.batch);
    weights->h_blocking.nc = std::max<int64_t>(weights->h_blocking.nc, G);
  }
  weights->x_mr = tile_rows(x_config);
  weights->h_mr = tile_rows(h_config);
  const float* w = static_cast<const float*>(node.input(1)->data);
  const float* r = static_cast<const float*>(node.input(2)->data);
  const float* b = node.input(3) ? constant_f32(node.input(3)) : nullptr;
  const float* p = s.gates == 4 && node.input(7) ? constant_f32(node.input(7)) : nullptr;
  for (int64_t d = 0; d < s.directions; ++d) {
    weights->wt.emplace_back();
    weights->rt.emplace_back();
    // W is [gates H, input]: element (k, j) of W^T is w[j * input + k].
    pack_b(w + d * G * s.input, s.input, G, 1, s.input, &weights->wt.back(),
           weights->x_blocking.nr);
    pack_b(r + d * G * H, H, G, 1, H, &weights->rt.back(), weights->h_blocking.nr);
    std::vector<float> wb(static_cast<size_t>(G), 0.0f), rb(static_cast<size_t>(G), 0.0f);
    for (int64_t j = 0; b != nullptr && j < G; ++j) {
      wb[static_cast<size_t>(j)] = b[d * 2 * G + j];
      rb[static_cast<size_t>(j)] = b[d * 2 * G + G + j];
    }
    if (s.gates == 4) {
      for (int64_t j = 0; j < G; ++j) wb[static_cast<size_t>(j)] += rb[static_cast<size_t>(j)];
    }
    weights->wb.push_back(std::move(wb));
    weights->rb.push_back(std::move(rb));
    weights->peep.emplace_back(p ? std::vector<float>(p + d * 3 * H, p + (d + 1) * 3 * H)
                                 : std::vector<float>());
  }
  return weights;
}

// clip > 0 bounds every activation's input to [-clip, clip].
inline float clipped(float v, float clip) {
  return clip > 0.0f ? std::min(clip, std::max(-clip, v)) : v;
}

// One LSTM step for batch entry `bb`: g holds h R^T, gx that step's X W^T + biases.
void lstm_cell(const float* gx, float* g, float* hb, float* cb, int64_t H,
               const std::vector<float>& peep, float clip) {
  const int64_t G = 4 * H;
  if (peep.empty()) {
    // Without peepholes the gates' sums are the activations' inputs: clipped as they are added.
    for (int64_t j = 0; j < G; ++j) g[j] = clipped(g[j] + gx[j], clip);
    // i, o, f are one run of 3H; c's candidate the last H.
    unary_run(kSigmoidFn, g, g, 3 * H);
    unary_run(kTanhFn, g + 3 * H, g + 3 * H, H);
    for (int64_t j = 0; j < H; ++j) cb[j] = g[2 * H + j] * cb[j] + g[j] * g[3 * H + j];
    unary_run(kTanhFn, cb, hb, H);
    for (int64_t j = 0; j < H; ++j) hb[j] *= g[H + j];
    return;
  }
  for (int64_t j = 0; j < G; ++j) g[j] += gx[j];
  for (int64_t j = 0; j < H; ++j) {
    const float cp = cb[j];
    const float ig = sigmoid(clipped(g[j] + peep[static_cast<size_t>(j)] * cp, clip));
    const float fg =
        sigmoid(clipped(g[2 * H + j] + peep[static_cast<size_t>(2 * H + j)] * cp, clip));
    const float ct = fg * cp + ig * std::tanh(clipped(g[3 * H + j], clip));
    const float og = sigmoid(clipped(g[H + j] + peep[static_cast<size_t>(H + j)] * ct, clip));
    cb[j] = ct;
    hb[j] = og * std::tanh(ct);
  }
}

// GRU's update and reset gates in place: g[0, 2H) (h R^T + Rb) plus gx[0, 2H) (X W^T + Wb), then
// Sigmoid.
void gru_gates(const float* gx, float* g, int64_t H, float clip) {
  for (int64_t j = 0; j < 2 * H; ++j) g[j] = clipped(g[j] + gx[j], clip);
  unary_run(kSigmoidFn, g, g, 2 * H);
}

// h = (1 - z) n + z h with n = Tanh(gx_n + n_term), n written over n_term: n_term is
// r . (h Rn^T + Rbn) with linear_before_reset, else (r . h) Rn^T + Rbn.
void gru_blend(const float* gx_n, float* n_term, const float* z, float* hb, int64_t H, float clip) {
  for (int64_t j = 0; j < H; ++j) n_term[j] = clipped(n_term[j] + gx_n[j], clip);
  unary_run(kTanhFn, n_term, n_term, H);
  for (int64_t j = 0; j < H; ++j) hb[j] = (1.0f - z[j]) * n_term[j] + z[j] * hb[j];
}

}  // namespace

std::string query_recurrent(const RegionView& region, const NodeView& node) {
  (void)region;
  RecurrentShape s;
  return recurrent_shape(node, &s);
}

Step build_recurrent(BuildContext& ctx) {
  const NodeView& node = ctx.node;
  RecurrentShape s;
  recurrent_shape(node, &s);
  const bool lstm = s.gates == 4;
  const bool linear_before_reset = node.attr_int("linear_before_reset", 0) != 0;
  const int64_t H = s.hidden, G = s.gates * H;
  std::shared_ptr<const RecurrentWeights> weights = pack_recurrent(ctx, s);
  const int32_t x_in = node.input_index(0);
  const int32_t h0_in = node.input(5) ? node.input_index(5) : -1;
  const int32_t c0_in = lstm && node.input(6) ? node.input_index(6) : -1;
  const int32_t y_out = node.output_index(0);
  const int32_t yh_out = node.num_outputs() > 1 ? node.output_index(1) : -1;
  const int32_t yc_out = lstm && node.num_outputs() > 2 ? node.output_index(2) : -1;
  const int32_t lens_in = node.input(4) ? node.input_index(4) : -1;
  const float clip = node.attr_float("clip", 0.0f);
  auto scratch = std::make_shared<RecurrentScratch>();
  scratch->xw.resize(static_cast<size_t>(s.seq * s.batch * G));
  scratch->hr.resize(static_cast<size_t>(s.batch * G));
  scratch->state.resize(static_cast<size_t>(2 * s.batch * H));
  scratch->tmp.resize(static_cast<size_t>(s.batch * H));
  if (!lstm && !linear_before_reset) scratch->rh.resize(static_cast<size_t>(s.batch * G));
  return [=](std::vector<float*>& v) {
    RecurrentScratch& k = *scratch;
    // Each entry's length (sequence_lens clamped to [0, seq], as core's kernels read it); the
    // walk runs to the longest, and Y rows past an entry's length stay zero.
    std::vector<int64_t> len(static_cast<size_t>(s.batch), s.seq);
    int64_t steps = s.seq;
    if (lens_in >= 0) {
      const int32_t* l = reinterpret_cast<const int32_t*>(v[lens_in]);
      steps = 0;
      for (int64_t bb = 0; bb < s.batch; ++bb) {
        len[static_cast<size_t>(bb)] = std::min<int64_t>(std::max<int32_t>(l[bb], 0), s.seq);
        steps = std::max(steps, len[static_cast<size_t>(bb)]);
      }
      if (y_out >= 0) {
        std::fill(v[y_out], v[y_out] + s.seq * s.directions * s.batch * H, 0.0f);
      }
    }
    pack_a(v[x_in], s.seq * s.batch, s.input, s.input, 1, &k.x, weights->x_mr);
    float* h = k.state.data();
    float* c = k.state.data() + s.batch * H;
    for (int64_t d = 0; d < s.directions; ++d) {
      const size_t du = static_cast<size_t>(d);
      const bool reverse = s.reverse_only || d == 1;
      Epilogue x_bias;
      x_bias.col_bias = weights->wb[du].data();
      sgemm_packed(k.x, weights->wt[du], k.xw.data(), G, x_bias, weights->x_blocking);
      for (int64_t bb = 0; bb < s.batch; ++bb) {
        for (int64_t j = 0; j < H; ++j) {
          h[bb * H + j] = h0_in >= 0 ? v[h0_in][s.state(d, bb) + j] : 0.0f;
          c[bb * H + j] = c0_in >= 0 ? v[c0_in][s.state(d, bb) + j] : 0.0f;
        }
      }
      Epilogue h_bias;
      if (!lstm) h_bias.col_bias = weights->rb[du].data();
      for (int64_t i = 0; i < steps; ++i) {
        // Entry bb's time step at walk step i, or -1 once its sequence has ended.
        auto time_of = [&](int64_t bb) -> int64_t {
          const int64_t n = len[static_cast<size_t>(bb)];
          return i >= n ? -1 : reverse ? n - 1 - i : i;
        };
        pack_a(h, s.batch, H, H, 1, &k.h, weights->h_mr);
        sgemm_packed(k.h, weights->rt[du], k.hr.data(), G, h_bias, weights->h_blocking);
        if (!lstm) {
          for (int64_t bb = 0; bb < s.batch; ++bb) {
            const int64_t t = time_of(bb);
            if (t < 0) continue;
            float* g = k.hr.data() + bb * G;
            gru_gates(k.xw.data() + s.x_row(t, bb) * G, g, H, clip);
            for (int64_t j = 0; j < H && !linear_before_reset; ++j) {
              k.tmp[static_cast<size_t>(bb * H + j)] = g[H + j] * h[bb * H + j];
            }
          }
          if (!linear_before_reset) {
            // (r . h) Rn^T + Rbn: a second product, of which n's columns are used.
            pack_a(k.tmp.data(), s.batch, H, H, 1, &k.reset_h, weights->h_mr);
            sgemm_packed(k.reset_h, weights->rt[du], k.rh.data(), G, h_bias,
                         weights->h_blocking);
          }
        }
        for (int64_t bb = 0; bb < s.batch; ++bb) {
          const int64_t t = time_of(bb);
          if (t < 0) continue;
          const float* gx = k.xw.data() + s.x_row(t, bb) * G;
          float* g = k.hr.data() + bb * G;
          float* hb = h + bb * H;
          if (lstm) {
            lstm_cell(gx, g, hb, c + bb * H, H, weights->peep[du], clip);
          } else {
            float* n_term = linear_before_reset ? g + 2 * H : k.rh.data() + bb * G + 2 * H;
            if (linear_before_reset) {
              for (int64_t j = 0; j < H; ++j) n_term[j] *= g[H + j];
            }
            gru_blend(gx + 2 * H, n_term, g, hb, H, clip);
          }
          if (y_out >= 0) std::copy(hb, hb + H, v[y_out] + s.y(t, d, bb));
        }
      }
      for (int64_t bb = 0; bb < s.batch; ++bb) {
        if (yh_out >= 0) std::copy(h + bb * H, h + (bb + 1) * H, v[yh_out] + s.state(d, bb));
        if (yc_out >= 0) std::copy(c + bb * H, c + (bb + 1) * H, v[yc_out] + s.state(d, bb));
      }
    }
  };
}

}  // namespace tessera::cpu
