// IsInf (opset 10+): true where x is +inf (detect_positive, default 1) or -inf (detect_negative,
// default 1); float32 and float16 in, bool out.
#include <cmath>

#include "op.hpp"

namespace tessera::ops {
namespace {

void infer_is_inf(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DType::kFloat32, DType::kFloat16});
  ctx.outputs[0] = {DType::kBool, ctx.input(0).shape};
}

void compute_is_inf(ComputeContext& ctx) {
  const bool positive = ctx.node.attrs.get_int("detect_positive", 1) != 0;
  const bool negative = ctx.node.attrs.get_int("detect_negative", 1) != 0;
  const std::vector<float> x = ctx.input(0).to_float_vector();
  bool* y = ctx.outputs[0].data<bool>();
  for (size_t i = 0; i < x.size(); ++i) {
    y[i] = std::isinf(x[i]) && (x[i] > 0 ? positive : negative);
  }
}

}  // namespace

TESSERA_REGISTER_OP("IsInf", infer_is_inf, compute_is_inf);

}  // namespace tessera::ops
