// Div: elementwise a / b with numpy broadcasting (float32, float16, int64, int32, int8, uint8).
// Integer division truncates toward zero, as ONNX Runtime and the ONNX reference implementation
// do (not numpy's floor division: -7 / 2 is -3); an integer division by zero is an error naming
// the node.
#include <limits>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void compute_div(ComputeContext& ctx) {
  const std::string where = node_where(ctx.node);
  compute_arithmetic(ctx, [&where](auto x, auto y) {
    using T = decltype(x);
    if constexpr (std::is_integral_v<T>) {
      if (y == 0) throw Error(where + ": integer division by zero");
      // lowest / -1 overflows; wrap to lowest like the two's-complement hardware result.
      if constexpr (std::is_signed_v<T>) {
        if (y == -1) return wrapping_sub(T{0}, x);
      }
      return static_cast<T>(x / y);
    } else {
      return x / y;
    }
  });
}

}  // namespace

TESSERA_REGISTER_OP("Div", infer_arithmetic, compute_div);

}  // namespace tessera::ops
