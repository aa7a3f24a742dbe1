// LSTM (opsets 7 and 14): gates i, o, f, c in W, R and B's order; optional peepholes P (i, o, f),
// input_forget coupling f = 1 - i, clip on the gates' pre-activations, activations f, g, h per
// direction (default Sigmoid, Tanh, Tanh). util/recurrent.hpp walks directions, batch entries
// and time steps; this file is the cell.
#include "op.hpp"
#include "util/recurrent.hpp"

namespace tessera::ops {
namespace {

constexpr int64_t kGates = 4;

RecurrentSpec lstm_spec(const InferContext& ctx) {
  ctx.expect_inputs(3, 8);
  RecurrentSpec s = recurrent_spec(ctx, kGates, {"Sigmoid", "Tanh", "Tanh"}, {5, 6});
  if (ctx.has_input(7)) {
    ctx.expect_dtype(7, {DType::kFloat32});
    const Shape want = {s.directions, 3 * s.hidden};
    if (ctx.input(7).shape != want) {
      ctx.fail("input 'P' has shape " + shape_str(ctx.input(7).shape) + "; expected " +
               shape_str(want));
    }
  }
  const int64_t input_forget = attr_int(ctx, "input_forget", 0);
  if (input_forget != 0 && input_forget != 1) ctx.fail("attribute 'input_forget' must be 0 or 1");
  return s;
}

void infer_lstm(InferContext& ctx) {
  recurrent_outputs(ctx, lstm_spec(ctx), 3);
}

void compute_lstm(ComputeContext& ctx) {
  const InferContext ictx = context_of_constants(ctx);
  const RecurrentSpec s = lstm_spec(ictx);
  const bool input_forget = ctx.node.attrs.get_int("input_forget", 0) != 0;
  const int64_t H = s.hidden;
  const RecurrentOperands in(ctx, s, kGates);
  const float* peep = ctx.has_input(7) ? ctx.input(7).data<float>() : nullptr;
  std::vector<float> g(static_cast<size_t>(kGates * H));
  recurrent_walk(ctx, s, 5, 6, [&](int64_t d, int64_t b, int64_t t, float* h, float* c) {
    in.input_gates(d, t, b, /*with_r_bias=*/true, g.data());
    recurrent_matvec(in.r_rows(d, 0), kGates * H, H, h, g.data());
    const std::vector<RecurrentActivation>& act = s.activations[static_cast<size_t>(d)];
    const float* p = peep ? peep + d * 3 * H : nullptr;
    for (int64_t j = 0; j < H; ++j) {
      const size_t u = static_cast<size_t>(j);
      const float c_prev = c[j];
      float gi = g[u] + (p ? p[j] * c_prev : 0.0f);
      float gf = g[u + static_cast<size_t>(2 * H)] + (p ? p[2 * H + j] * c_prev : 0.0f);
      const float i_gate = act[0](recurrent_clip(s, gi));
      const float f_gate = input_forget ? 1.0f - i_gate : act[0](recurrent_clip(s, gf));
      const float c_hat = act[1](recurrent_clip(s, g[u + static_cast<size_t>(3 * H)]));
      c[j] = f_gate * c_prev + i_gate * c_hat;
      const float go = g[u + static_cast<size_t>(H)] + (p ? p[H + j] * c[j] : 0.0f);
      const float o_gate = act[0](recurrent_clip(s, go));
      h[j] = o_gate * act[2](c[j]);
    }
  });
}

}  // namespace

TESSERA_REGISTER_OP("LSTM", infer_lstm, compute_lstm);

}  // namespace tessera::ops
