// Mul: elementwise a * b with numpy broadcasting (float32, float16, int64, int32, int8,
// uint8). Integer overflow wraps as in numpy.
#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_mul(ComputeContext& ctx) {
  compute_arithmetic(ctx, [](auto x, auto y) { return wrapping_mul(x, y); });
}

}  // namespace

TESSERA_REGISTER_OP("Mul", infer_arithmetic, compute_mul);

}  // namespace tessera::ops
