// Range (opset 11): start, start + delta, ... up to (not including) limit; the three scalar
// inputs share a dtype (float32, int32, int64) and must be constants, since they fix the output
// length max(ceil((limit - start) / delta), 0).
#include <cmath>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

int64_t range_length(const Tensor& start, const Tensor& limit, const Tensor& delta,
                     const std::string& where) {
  if (start.dtype() == DType::kFloat32) {
    const double s = start.scalar_as_double(0);
    const double d = delta.scalar_as_double(0);
    if (d == 0.0) throw Error(where + ": input 'delta' is 0");
    const double n = std::ceil((limit.scalar_as_double(0) - s) / d);
    return n > 0 ? static_cast<int64_t>(n) : 0;
  }
  const int64_t s = start.scalar_as_int64(0);
  const int64_t l = limit.scalar_as_int64(0);
  const int64_t d = delta.scalar_as_int64(0);
  if (d == 0) throw Error(where + ": input 'delta' is 0");
  // ceil((l - s) / d) in integers: round the truncated quotient up when it has a remainder of
  // the quotient's sign.
  const int64_t diff = l - s;
  int64_t n = diff / d;
  if (diff % d != 0 && ((diff > 0) == (d > 0))) ++n;
  return n > 0 ? n : 0;
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
  const int64_t n =
      range_length(ctx.constant_input(0), ctx.constant_input(1), ctx.constant_input(2), ctx.where);
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
  const int64_t s = start.scalar_as_int64(0);
  const int64_t d = delta.scalar_as_int64(0);
  for (int64_t i = 0; i < y.numel(); ++i) {
    if (y.dtype() == DType::kInt32) {
      y.data<int32_t>()[i] = static_cast<int32_t>(s + i * d);
    } else {
      y.data<int64_t>()[i] = s + i * d;
    }
  }
}

}  // namespace

TESSERA_REGISTER_OP("Range", infer_range, compute_range);

}  // namespace tessera::ops
