// ReduceSumSquare: the sum of squares over the reduced axes (util/reduce.hpp; the axes are input 1
// from opset 18), float32 and float16, accumulated in double.
#include <cmath>

#include "op.hpp"
#include "util/reduce.hpp"

namespace tessera::ops {
namespace {

constexpr int64_t kAxesInputOpset = 18;

void infer_reduce_sum_square(InferContext& ctx) {
  infer_reduce(ctx, kAxesInputOpset, kFloatDTypes);
}

void compute_reduce_sum_square(ComputeContext& ctx) {
  const std::vector<bool> reduce = reduced_axes_for_compute(ctx, kAxesInputOpset);
  dispatch_float(ctx.input(0).dtype(), node_where(ctx.node), [&](auto tag) {
    reduce_elements<decltype(tag)>(
        ctx.input(0), reduce, ctx.outputs[0], 0.0,
        [](double acc, float v) { return acc + static_cast<double>(v) * v; },
        [](double acc, int64_t) { return acc; });
  });
}

}  // namespace

TESSERA_REGISTER_OP("ReduceSumSquare", infer_reduce_sum_square, compute_reduce_sum_square);

}  // namespace tessera::ops
