// Sum: the elementwise sum of one or more float32 or float16 inputs with numpy broadcasting
// (util/variadic.hpp), added in the inputs' order in float32 as the ONNX reference does.
#include "op.hpp"
#include "util/variadic.hpp"

namespace tessera::ops {
namespace {

void infer_sum(InferContext& ctx) {
  infer_variadic(ctx, kFloatDTypes);
}

void compute_sum(ComputeContext& ctx) {
  compute_variadic(
      ctx, [](auto a, auto b) { return a + b; }, [](auto a, int64_t) { return a; });
}

}  // namespace

TESSERA_REGISTER_OP("Sum", infer_sum, compute_sum);

}  // namespace tessera::ops
