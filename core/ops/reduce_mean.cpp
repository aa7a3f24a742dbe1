// ReduceMean (ONNX opsets 1-18) on float32 and float16: the mean over the reduced axes
// (util/reduce.hpp: the attribute 'axes' before opset 18, input 1 from 18), accumulated in
// double. A mean over zero elements is 0/0 = NaN, as in numpy.
#include "op.hpp"
#include "util/reduce.hpp"

namespace tessera::ops {
namespace {

constexpr int64_t kAxesInputOpset = 18;

void infer_reduce_mean(InferContext& ctx) {
  infer_reduce(ctx, kAxesInputOpset, kFloatDTypes);
}

void compute_reduce_mean(ComputeContext& ctx) {
  const std::vector<bool> reduce = reduced_axes_for_compute(ctx, kAxesInputOpset);
  dispatch_float(ctx.input(0).dtype(), node_where(ctx.node), [&](auto tag) {
    reduce_elements<decltype(tag)>(
        ctx.input(0), reduce, ctx.outputs[0], 0.0, [](double acc, float v) { return acc + v; },
        [](double acc, int64_t n) { return acc / static_cast<double>(n); });
  });
}

}  // namespace

TESSERA_REGISTER_OP("ReduceMean", infer_reduce_mean, compute_reduce_mean);

}  // namespace tessera::ops
