// ReduceProd: the product over the reduced axes (util/reduce.hpp; the axes are input 1 from
// opset 18). Floats accumulate in double; integers wrap around like numpy. A product over zero
// elements is 1.
#include "op.hpp"
#include "util/reduce.hpp"

namespace tessera::ops {
namespace {

constexpr int64_t kAxesInputOpset = 18;

void infer_reduce_prod(InferContext& ctx) {
  infer_reduce(ctx, kAxesInputOpset, kNumericDTypes);
}

void compute_reduce_prod(ComputeContext& ctx) {
  const std::vector<bool> reduce = reduced_axes_for_compute(ctx, kAxesInputOpset);
  dispatch_numeric(ctx.input(0).dtype(), node_where(ctx.node), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    using Acc = std::conditional_t<std::is_floating_point_v<C>, double, C>;
    reduce_elements<T>(
        ctx.input(0), reduce, ctx.outputs[0], Acc{1},
        [](Acc acc, C v) { return wrapping_mul(acc, static_cast<Acc>(v)); },
        [](Acc acc, int64_t) { return acc; });
  });
}

}  // namespace

TESSERA_REGISTER_OP("ReduceProd", infer_reduce_prod, compute_reduce_prod);

}  // namespace tessera::ops
