// ReduceL1: the sum of absolute values over the reduced axes (util/reduce.hpp; the axes are input 1
// from opset 18), float32 and float16, accumulated in double.
#include <cmath>

#include "op.hpp"
#include "util/reduce.hpp"

namespace tessera::ops {
namespace {

constexpr int64_t kAxesInputOpset = 18;

void infer_reduce_l1(InferContext& ctx) {
  infer_reduce(ctx, kAxesInputOpset, kFloatDTypes);
}

void compute_reduce_l1(ComputeContext& ctx) {
  const std::vector<bool> reduce = reduced_axes_for_compute(ctx, kAxesInputOpset);
  dispatch_float(ctx.input(0).dtype(), node_where(ctx.node), [&](auto tag) {
    reduce_elements<decltype(tag)>(
        ctx.input(0), reduce, ctx.outputs[0], 0.0,
        [](double acc, float v) { return acc + std::fabs(static_cast<double>(v)); },
        [](double acc, int64_t) { return acc; });
  });
}

}  // namespace

TESSERA_REGISTER_OP("ReduceL1", infer_reduce_l1, compute_reduce_l1);

}  // namespace tessera::ops
