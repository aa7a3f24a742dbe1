// ReduceMax: the maximum over the reduced axes (util/reduce.hpp; the axes are input 1 from
// opset 18; bool inputs from opset 20). NaN propagates, as in numpy. A maximum over zero
// elements is -inf (the lowest value for integers, false for bool), as in the ONNX reference.
#include "op.hpp"
#include "util/reduce.hpp"

namespace tessera::ops {
namespace {

constexpr int64_t kAxesInputOpset = 18;

void infer_reduce_max(InferContext& ctx) {
  infer_reduce_max_min(ctx, kAxesInputOpset);
}

void compute_reduce_max(ComputeContext& ctx) {
  const std::vector<bool> reduce = reduced_axes_for_compute(ctx, kAxesInputOpset);
  dispatch_dtype(ctx.input(0).dtype(), node_where(ctx.node), [&](auto tag) {
    using C = ComputeType<decltype(tag)>;
    reduce_elements<decltype(tag)>(
        ctx.input(0), reduce, ctx.outputs[0], lowest_or_neg_inf<C>(),
        [](C acc, C v) { return max_propagating_nan(acc, v); }, [](C acc, int64_t) { return acc; });
  });
}

}  // namespace

TESSERA_REGISTER_OP("ReduceMax", infer_reduce_max, compute_reduce_max);

}  // namespace tessera::ops
