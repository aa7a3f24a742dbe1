// ReduceMin: the minimum over the reduced axes (util/reduce.hpp; the axes are input 1 from
// opset 18; bool inputs from opset 20). NaN propagates, as in numpy. A minimum over zero
// elements is +inf (the highest value for integers, true for bool), as in the ONNX reference.
#include "op.hpp"
#include "util/reduce.hpp"

namespace tessera::ops {
namespace {

constexpr int64_t kAxesInputOpset = 18;

void infer_reduce_min(InferContext& ctx) {
  infer_reduce_max_min(ctx, kAxesInputOpset);
}

void compute_reduce_min(ComputeContext& ctx) {
  const std::vector<bool> reduce = reduced_axes_for_compute(ctx, kAxesInputOpset);
  dispatch_dtype(ctx.input(0).dtype(), node_where(ctx.node), [&](auto tag) {
    using C = ComputeType<decltype(tag)>;
    reduce_elements<decltype(tag)>(
        ctx.input(0), reduce, ctx.outputs[0], highest_or_inf<C>(),
        [](C acc, C v) { return min_propagating_nan(acc, v); }, [](C acc, int64_t) { return acc; });
  });
}

}  // namespace

TESSERA_REGISTER_OP("ReduceMin", infer_reduce_min, compute_reduce_min);

}  // namespace tessera::ops
