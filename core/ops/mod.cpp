// Mod (opset 10+): the remainder of a / b with numpy broadcasting. fmod = 0 (integers only) gives
// the remainder with the divisor's sign, as Python's % and numpy.mod; fmod = 1 the one with the
// dividend's sign, as C's fmod (required for floats). An integer divisor of zero is an error
// naming the node.
#include <cmath>
#include <limits>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/elementwise.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

void infer_mod(InferContext& ctx) {
  expect_opset_at_least(ctx, 10);
  const bool fmod = attr_bool(ctx, "fmod", false);
  infer_arithmetic(ctx);
  const DType t = ctx.input(0).dtype;
  if (!fmod && (t == DType::kFloat32 || t == DType::kFloat16)) {
    ctx.fail("attribute 'fmod' = 0 is for integer inputs; floating-point inputs need fmod = 1");
  }
}

template <typename T>
T int_remainder(T x, T y, bool c_style, const std::string& where) {
  if (y == T{0}) throw Error(where + ": integer division by zero");
  if constexpr (std::is_signed_v<T>) {
    if (y == T{-1}) return T{0};  // lowest % -1 overflows in C++; the remainder is 0 anyway
    T r = static_cast<T>(x % y);
    if (!c_style && r != T{0} && ((r < T{0}) != (y < T{0}))) r = static_cast<T>(r + y);
    return r;
  } else {
    (void)c_style;  // both conventions agree when nothing is negative
    return static_cast<T>(x % y);
  }
}

void compute_mod(ComputeContext& ctx) {
  const std::string where = node_where(ctx.node);
  const bool c_style = ctx.node.attrs.get_int("fmod", 0) == 1;  // checked by infer_mod
  compute_arithmetic(ctx, [&](auto x, auto y) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>) {
      return static_cast<C>(std::fmod(x, y));
    } else {
      return int_remainder<C>(x, y, c_style, where);
    }
  });
}

}  // namespace

TESSERA_REGISTER_OP("Mod", infer_mod, compute_mod);

}  // namespace tessera::ops
