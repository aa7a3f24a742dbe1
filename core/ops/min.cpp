// Min: the elementwise minimum of one or more inputs with numpy broadcasting (util/variadic.hpp);
// float32 and float16, and from opset 12 int64, int32, int8 and uint8. NaN propagates, as in
// numpy's minimum.
#include "op.hpp"
#include "util/variadic.hpp"

namespace tessera::ops {
namespace {

void infer_min(InferContext& ctx) {
  infer_variadic_max_min(ctx);
}

void compute_min(ComputeContext& ctx) {
  compute_variadic(
      ctx, [](auto a, auto b) { return min_propagating_nan(a, b); },
      [](auto a, int64_t) { return a; });
}

}  // namespace

TESSERA_REGISTER_OP("Min", infer_min, compute_min);

}  // namespace tessera::ops
