// Xor: elementwise logical xor of two bool tensors with numpy broadcasting (opset 7+).
#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_xor(InferContext& ctx) {
  infer_logical(ctx, 2);
}

void compute_xor(ComputeContext& ctx) {
  broadcast_binary<bool, bool>(ctx.input(0), ctx.input(1), ctx.outputs[0],
                               [](bool x, bool y) { return x != y; });
}

}  // namespace

TESSERA_REGISTER_OP("Xor", infer_xor, compute_xor);

}  // namespace tessera::ops
