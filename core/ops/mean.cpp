// Mean: the elementwise mean of one or more float32 or float16 inputs with numpy broadcasting
// (util/variadic.hpp): their sum in the inputs' order in float32, divided by the input count.
#include "op.hpp"
#include "util/variadic.hpp"

namespace tessera::ops {
namespace {

void infer_mean(InferContext& ctx) {
  infer_variadic(ctx, kFloatDTypes);
}

void compute_mean(ComputeContext& ctx) {
  compute_variadic(
      ctx, [](auto a, auto b) { return a + b; },
      [](auto a, int64_t n) { return a / static_cast<decltype(a)>(n); });
}

}  // namespace

TESSERA_REGISTER_OP("Mean", infer_mean, compute_mean);

}  // namespace tessera::ops
