// RNN (opsets 7 and 14): Ht = f(Xt Wi^T + Ht-1 Ri^T + Wbi + Rbi), activation f per direction
// (default Tanh). util/recurrent.hpp walks the sequence; this file is the cell.
#include "op.hpp"
#include "util/recurrent.hpp"

namespace tessera::ops {
namespace {

RecurrentSpec rnn_spec(const InferContext& ctx) {
  ctx.expect_inputs(3, 6);
  return recurrent_spec(ctx, 1, {"Tanh"}, {5});
}

void infer_rnn(InferContext& ctx) {
  if (ctx.outputs.size() > 2) ctx.fail("has more than 2 outputs");
  recurrent_outputs(ctx, rnn_spec(ctx));
}

void compute_rnn(ComputeContext& ctx) {
  const InferContext ictx = context_of_constants(ctx);
  const RecurrentSpec s = rnn_spec(ictx);
  const int64_t H = s.hidden;
  const RecurrentLayout at{s};
  const float* x = ctx.input(0).data<float>();
  const float* w = ctx.input(1).data<float>();
  const float* r = ctx.input(2).data<float>();
  const float* bias = ctx.has_input(3) ? ctx.input(3).data<float>() : nullptr;
  std::vector<float> g(static_cast<size_t>(H));
  recurrent_walk(ctx, s, 5, 6, [&](int64_t d, int64_t b, int64_t t, float* h, float*) {
    for (int64_t j = 0; j < H; ++j) {
      g[static_cast<size_t>(j)] = bias ? bias[d * 2 * H + j] + bias[d * 2 * H + H + j] : 0.0f;
    }
    recurrent_matvec(w + d * H * s.input, H, s.input, x + at.x(t, b), g.data());
    recurrent_matvec(r + d * H * H, H, H, h, g.data());
    const RecurrentActivation& f = s.activations[static_cast<size_t>(d)][0];
    for (int64_t j = 0; j < H; ++j) h[j] = f(recurrent_clip(s, g[static_cast<size_t>(j)]));
  });
}

}  // namespace

TESSERA_REGISTER_OP("RNN", infer_rnn, compute_rnn);

}  // namespace tessera::ops
