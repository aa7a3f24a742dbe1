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
  recurrent_outputs(ctx, rnn_spec(ctx), 2);
}

void compute_rnn(ComputeContext& ctx) {
  const InferContext ictx = context_of_constants(ctx);
  const RecurrentSpec s = rnn_spec(ictx);
  const int64_t H = s.hidden;
  const RecurrentOperands in(ctx, s, 1);
  std::vector<float> g(static_cast<size_t>(H));
  recurrent_walk(ctx, s, 5, 6, [&](int64_t d, int64_t b, int64_t t, float* h, float*) {
    in.input_gates(d, t, b, /*with_r_bias=*/true, g.data());
    recurrent_matvec(in.r_rows(d, 0), H, H, h, g.data());
    const RecurrentActivation& f = s.activations[static_cast<size_t>(d)][0];
    for (int64_t j = 0; j < H; ++j) h[j] = f(recurrent_clip(s, g[static_cast<size_t>(j)]));
  });
}

}  // namespace

TESSERA_REGISTER_OP("RNN", infer_rnn, compute_rnn);

}  // namespace tessera::ops
