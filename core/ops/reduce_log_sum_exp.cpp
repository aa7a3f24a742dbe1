// ReduceLogSumExp: log(sum(e^x)) over the reduced axes (util/reduce.hpp; the axes are input 1
// from opset 18), float32 and float16, accumulated in double as a running maximum and the sum of
// e^(x - maximum), so large inputs do not overflow. Zero elements give -inf.
#include <cmath>
#include <limits>

#include "op.hpp"
#include "util/reduce.hpp"

namespace tessera::ops {
namespace {

constexpr int64_t kAxesInputOpset = 18;

struct Running {
  double max = -std::numeric_limits<double>::infinity();
  double sum = 0.0;  // of e^(x - max)
};

void infer_reduce_log_sum_exp(InferContext& ctx) {
  infer_reduce(ctx, kAxesInputOpset, kFloatDTypes);
}

void compute_reduce_log_sum_exp(ComputeContext& ctx) {
  const std::vector<bool> reduce = reduced_axes_for_compute(ctx, kAxesInputOpset);
  dispatch_float(ctx.input(0).dtype(), node_where(ctx.node), [&](auto tag) {
    reduce_elements<decltype(tag)>(
        ctx.input(0), reduce, ctx.outputs[0], Running{},
        [](Running acc, float v) {
          const double x = v;
          if (x > acc.max) {
            acc.sum = acc.sum * std::exp(acc.max - x) + 1.0;
            acc.max = x;
          } else if (x == acc.max) {
            acc.sum += 1.0;  // also for infinities, where x - max would be NaN
          } else {
            acc.sum += std::exp(x - acc.max);
          }
          return acc;
        },
        [](Running acc, int64_t) {
          return acc.sum == 0.0 ? -std::numeric_limits<double>::infinity()
                                : acc.max + std::log(acc.sum);
        });
  });
}

}  // namespace

TESSERA_REGISTER_OP("ReduceLogSumExp", infer_reduce_log_sum_exp, compute_reduce_log_sum_exp);

}  // namespace tessera::ops
