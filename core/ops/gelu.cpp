// Gelu (opset 20): y = x * Phi(x) with Phi the standard normal CDF, exactly through erf
// (approximate = "none", the default) or by the tanh formula (approximate = "tanh"); float32 and
// float16 (computed in float32).
#include <cmath>
#include <string>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/elementwise.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)

bool tanh_approximation(const InferContext& ctx) {
  const std::string approximate = attr_string(ctx, "approximate", "none");
  if (approximate != "none" && approximate != "tanh") {
    ctx.fail("attribute 'approximate' = '" + approximate + "' must be 'none' or 'tanh'");
  }
  return approximate == "tanh";
}

void infer_gelu(InferContext& ctx) {
  expect_opset_at_least(ctx, 20);
  infer_float_activation(ctx);
  tanh_approximation(ctx);
}

void compute_gelu(ComputeContext& ctx) {
  const InferContext ictx(ctx.node, ctx.opset, node_where(ctx.node));
  if (tanh_approximation(ictx)) {
    compute_float_activation(ctx, [](float v) {
      const double x = v;
      return static_cast<float>(0.5 * x *
                                (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x))));
    });
  } else {
    compute_float_activation(ctx, [](float v) {
      const double x = v;
      return static_cast<float>(0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))));
    });
  }
}

}  // namespace

TESSERA_REGISTER_OP("Gelu", infer_gelu, compute_gelu);

}  // namespace tessera::ops
