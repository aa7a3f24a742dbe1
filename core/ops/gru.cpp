// GRU (opsets 7 and 14): gates z, r, h in W, R and B's order; linear_before_reset applies the
// reset gate after the recurrent product (PyTorch's form, which its exporter writes as 1);
// activations f, g per direction (default Sigmoid, Tanh). util/recurrent.hpp walks the
// sequence; this file is the cell.
#include "op.hpp"
#include "util/recurrent.hpp"

namespace tessera::ops {
namespace {

constexpr int64_t kGates = 3;

RecurrentSpec gru_spec(const InferContext& ctx) {
  ctx.expect_inputs(3, 6);
  const int64_t lbr = attr_int(ctx, "linear_before_reset", 0);
  if (lbr != 0 && lbr != 1) ctx.fail("attribute 'linear_before_reset' must be 0 or 1");
  return recurrent_spec(ctx, kGates, {"Sigmoid", "Tanh"}, {5});
}

void infer_gru(InferContext& ctx) {
  recurrent_outputs(ctx, gru_spec(ctx), 2);
}

void compute_gru(ComputeContext& ctx) {
  const InferContext ictx = context_of_constants(ctx);
  const RecurrentSpec s = gru_spec(ictx);
  const bool linear_before_reset = ctx.node.attrs.get_int("linear_before_reset", 0) != 0;
  const int64_t H = s.hidden;
  const RecurrentOperands in(ctx, s, kGates);
  std::vector<float> xw(static_cast<size_t>(kGates * H)), hr(static_cast<size_t>(kGates * H));
  std::vector<float> rh(static_cast<size_t>(H)), z(static_cast<size_t>(H));
  std::vector<float> reset(static_cast<size_t>(H));
  recurrent_walk(ctx, s, 5, 6, [&](int64_t d, int64_t b, int64_t t, float* h, float*) {
    in.input_gates(d, t, b, /*with_r_bias=*/false, xw.data());
    const float* rb = in.r_bias(d);
    for (int64_t j = 0; j < kGates * H; ++j) hr[static_cast<size_t>(j)] = rb ? rb[j] : 0.0f;
    // z and r from the plain recurrent product; h's recurrent term depends on the reset form.
    recurrent_matvec(in.r_rows(d, 0), 2 * H, H, h, hr.data());
    const std::vector<RecurrentActivation>& act = s.activations[static_cast<size_t>(d)];
    for (int64_t j = 0; j < H; ++j) {
      const size_t u = static_cast<size_t>(j);
      z[u] = act[0](recurrent_clip(s, xw[u] + hr[u]));
      reset[u] = act[0](
          recurrent_clip(s, xw[u + static_cast<size_t>(H)] + hr[u + static_cast<size_t>(H)]));
    }
    float* h_term = hr.data() + 2 * H;  // holds Rbh
    if (linear_before_reset) {
      recurrent_matvec(in.r_rows(d, 2 * H), H, H, h, h_term);  // Ht-1 Rh^T + Rbh, then times r
      for (int64_t j = 0; j < H; ++j) h_term[j] *= reset[static_cast<size_t>(j)];
    } else {
      for (int64_t j = 0; j < H; ++j)
        rh[static_cast<size_t>(j)] = reset[static_cast<size_t>(j)] * h[j];
      recurrent_matvec(in.r_rows(d, 2 * H), H, H, rh.data(), h_term);  // (r . Ht-1) Rh^T + Rbh
    }
    for (int64_t j = 0; j < H; ++j) {
      const size_t u = static_cast<size_t>(j);
      const float h_hat = act[1](recurrent_clip(s, xw[u + static_cast<size_t>(2 * H)] + h_term[j]));
      h[j] = (1.0f - z[u]) * h_hat + z[u] * h[j];
    }
  });
}

}  // namespace

TESSERA_REGISTER_OP("GRU", infer_gru, compute_gru);

}  // namespace tessera::ops
