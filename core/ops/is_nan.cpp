// IsNaN (opset 9+): true where x is NaN; float32 and float16 in, bool out.
#include <cmath>

#include "op.hpp"

namespace tessera::ops {
namespace {

void infer_is_nan(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DType::kFloat32, DType::kFloat16});
  ctx.outputs[0] = {DType::kBool, ctx.input(0).shape};
}

void compute_is_nan(ComputeContext& ctx) {
  const std::vector<float> x = ctx.input(0).to_float_vector();
  bool* y = ctx.outputs[0].data<bool>();
  for (size_t i = 0; i < x.size(); ++i) y[i] = std::isnan(x[i]);
}

}  // namespace

TESSERA_REGISTER_OP("IsNaN", infer_is_nan, compute_is_nan);

}  // namespace tessera::ops
