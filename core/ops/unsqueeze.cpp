// Unsqueeze: inserts dims of size 1 at 'axes' (an attribute before opset 13, a constant input
// from 13), which index the OUTPUT (negative ones count from its end). Any dtype; returns a view.
#include "op.hpp"
#include "util/axes.hpp"

namespace tessera::ops {
namespace {

void infer_unsqueeze(InferContext& ctx) {
  std::vector<int64_t> axes;
  if (ctx.opset < 13) {
    ctx.expect_inputs(1, 1);
    axes = ctx.node.attrs.get_ints("axes");
  } else {
    ctx.expect_inputs(2, 2);
    ctx.expect_dtype(1, {DType::kInt64});
    axes = ctx.constant_input(1).to_int64_vector();
  }
  const Shape& in = ctx.input(0).shape;
  const int64_t out_rank = static_cast<int64_t>(in.size() + axes.size());
  const std::vector<int64_t> normalized =
      normalize_axes(axes, out_rank, ctx.where, ctx.opset < 13 ? "attribute 'axes'" : "'axes'");
  std::vector<bool> is_new(static_cast<size_t>(out_rank), false);
  for (int64_t a : normalized) is_new[static_cast<size_t>(a)] = true;
  Shape out;
  size_t next = 0;
  for (int64_t d = 0; d < out_rank; ++d)
    out.push_back(is_new[static_cast<size_t>(d)] ? 1 : in[next++]);
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

void compute_unsqueeze(ComputeContext& ctx) {
  ctx.outputs[0] = ctx.input(0).reshaped(ctx.outputs[0].shape());
}

}  // namespace

TESSERA_REGISTER_OP("Unsqueeze", infer_unsqueeze, compute_unsqueeze);

}  // namespace tessera::ops
