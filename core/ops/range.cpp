// Range (opset 11): start, start + delta, ... up to (not including) limit; the three scalar
// inputs share a dtype (float32, int32, int64) and must be constants, since they fix the output
// length max(ceil((limit - start) / delta), 0).
#include <cmath>
#include <limits>
#include <sstream>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

// GCC and clang have 128-bit integers on every 64-bit target this builds for; __extension__ keeps
// -Wpedantic quiet about it.
__extension__ using Int128 = __int128;

// "start 0, limit 1e+30, delta 1e-30": the three inputs as the error messages name them.
std::string inputs_str(const Tensor& start, const Tensor& limit, const Tensor& delta) {
  auto one = [](const Tensor& t) {
    if (t.dtype() != DType::kFloat32) return std::to_string(t.scalar_as_int64(0));
    std::ostringstream os;
    os << t.scalar_as_double(0);
    return os.str();
  };
  return "inputs 'start' " + one(start) + ", 'limit' " + one(limit) + ", 'delta' " + one(delta);
}

// max(ceil((limit - start) / delta), 0), refused when it is not a finite count or does not fit
// in int64 (ONNX Runtime refuses these too). The integer form is exact for any int64 inputs:
// limit - start and the quotient are computed in 128 bits, where they cannot overflow.
int64_t range_length(const Tensor& start, const Tensor& limit, const Tensor& delta,
                     const std::string& where) {
  if (start.dtype() == DType::kFloat32) {
    const double s = start.scalar_as_double(0);
    const double d = delta.scalar_as_double(0);
    if (d == 0.0) throw Error(where + ": input 'delta' is 0");
    const double n = std::ceil((limit.scalar_as_double(0) - s) / d);
    if (!std::isfinite(n)) {
      throw Error(where + ": the element count ceil((limit - start) / delta) is not finite (" +
                  inputs_str(start, limit, delta) + ")");
    }
    if (n <= 0) return 0;
    // 2^63 is the first double above every int64.
    if (n >= 9223372036854775808.0) {
      std::ostringstream count;
      count << n;
      throw Error(where + ": the element count ceil((limit - start) / delta) = " + count.str() +
                  " does not fit in int64 (" + inputs_str(start, limit, delta) + ")");
    }
    return static_cast<int64_t>(n);
  }
  const Int128 s = start.scalar_as_int64(0);
  const Int128 l = limit.scalar_as_int64(0);
  const Int128 d = delta.scalar_as_int64(0);
  if (d == 0) throw Error(where + ": input 'delta' is 0");
  // ceil((l - s) / d): round the truncated quotient up when it has a remainder of the
  // quotient's sign.
  const Int128 diff = l - s;
  Int128 n = diff / d;
  if (diff % d != 0 && ((diff > 0) == (d > 0))) ++n;
  if (n <= 0) return 0;
  if (n > std::numeric_limits<int64_t>::max()) {
    throw Error(where +
                ": the element count ceil((limit - start) / delta) does not fit in int64 (" +
                inputs_str(start, limit, delta) + ")");
  }
  return static_cast<int64_t>(n);
}

void infer_range(InferContext& ctx) {
  ctx.expect_inputs(3, 3);
  ctx.expect_dtype(0, {DType::kFloat32, DType::kInt32, DType::kInt64});
  for (size_t i = 0; i < 3; ++i) {
    const InputInfo& in = ctx.input(i);
    if (in.dtype != ctx.input(0).dtype || shape_numel(in.shape) != 1) {
      ctx.fail("inputs 'start', 'limit' and 'delta' must be scalars of one dtype; input " +
               std::to_string(i) + " is " + dtype_name(in.dtype) + " " + shape_str(in.shape));
    }
  }
  const Tensor& start = ctx.constant_input(0);
  const Tensor& limit = ctx.constant_input(1);
  const Tensor& delta = ctx.constant_input(2);
  const int64_t n = range_length(start, limit, delta, ctx.where);
  // A count that fits but whose bytes do not is refused here, naming the inputs; the memory
  // limit check after inference then names the output value and its size.
  int64_t bytes = 0;
  if (!try_mul(n, static_cast<int64_t>(dtype_size(ctx.input(0).dtype)), bytes)) {
    ctx.fail("the element count ceil((limit - start) / delta) = " + std::to_string(n) + " of " +
             inputs_str(start, limit, delta) + " gives a byte size that overflows int64");
  }
  ctx.outputs[0] = {ctx.input(0).dtype, {n}};
}

void compute_range(ComputeContext& ctx) {
  const Tensor& start = ctx.input(0);
  const Tensor& delta = ctx.input(2);
  Tensor& y = ctx.outputs[0];
  if (y.dtype() == DType::kFloat32) {
    // start + i * delta, not repeated addition, so error does not accumulate.
    const float s = start.data<float>()[0];
    const float d = delta.data<float>()[0];
    for (int64_t i = 0; i < y.numel(); ++i) y.data<float>()[i] = s + static_cast<float>(i) * d;
    return;
  }
  // start + i * delta lies between start and limit for every i < n, but i * delta alone may not
  // fit in int64 (start INT64_MIN, delta 2^62): the sum is taken modulo 2^64 in uint64, which
  // gives the exact value because the true one fits.
  const auto s = static_cast<uint64_t>(start.scalar_as_int64(0));
  const auto d = static_cast<uint64_t>(delta.scalar_as_int64(0));
  for (int64_t i = 0; i < y.numel(); ++i) {
    const auto v = static_cast<int64_t>(s + static_cast<uint64_t>(i) * d);
    if (y.dtype() == DType::kInt32) {
      y.data<int32_t>()[i] = static_cast<int32_t>(v);
    } else {
      y.data<int64_t>()[i] = v;
    }
  }
}

}  // namespace

TESSERA_REGISTER_OP("Range", infer_range, compute_range);

}  // namespace tessera::ops
