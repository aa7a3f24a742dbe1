// ReduceSum: the sum over the reduced axes (util/reduce.hpp; the axes are input 1 from opset 13).
// Floats accumulate in double; integers wrap around like numpy. A sum over zero elements is 0.
#include "op.hpp"
#include "util/reduce.hpp"

namespace tessera::ops {
namespace {

constexpr int64_t kAxesInputOpset = 13;

void infer_reduce_sum(InferContext& ctx) {
  infer_reduce(ctx, kAxesInputOpset, kNumericDTypes);
}

void compute_reduce_sum(ComputeContext& ctx) {
  const std::vector<bool> reduce = reduced_axes_for_compute(ctx, kAxesInputOpset);
  dispatch_numeric(ctx.input(0).dtype(), node_where(ctx.node), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    using Acc = std::conditional_t<std::is_floating_point_v<C>, double, C>;
    reduce_elements<T>(
        ctx.input(0), reduce, ctx.outputs[0], Acc{0},
        [](Acc acc, C v) { return wrapping_add(acc, static_cast<Acc>(v)); },
        [](Acc acc, int64_t) { return acc; });
  });
}

}  // namespace

TESSERA_REGISTER_OP("ReduceSum", infer_reduce_sum, compute_reduce_sum);

}  // namespace tessera::ops
