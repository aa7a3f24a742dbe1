// Equal: elementwise a == b with numpy broadcasting; the output is bool. Both inputs share one
// dtype (float32, float16 compared as floats, int32, int64, int8, uint8, bool).
#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_equal(InferContext& ctx) {
  infer_comparison(ctx, {DType::kFloat32, DType::kFloat16, DType::kInt32, DType::kInt64,
                         DType::kInt8, DType::kUInt8, DType::kBool});
}

void compute_equal(ComputeContext& ctx) {
  compute_comparison(ctx, [](auto x, auto y) { return x == y; });
}

}  // namespace

TESSERA_REGISTER_OP("Equal", infer_equal, compute_equal);

}  // namespace tessera::ops
