// CumSum (opset 11+): running sums of x along the axis given by input 1 (a scalar or one-element
// int32/int64 tensor, in [-rank, rank-1]); `exclusive` leaves out the element itself, `reverse`
// sums from the end. Every numeric dtype (float16 summed in float32); integer sums wrap.
#include "op.hpp"
#include "util/axes.hpp"
#include "util/elementwise.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

// The axis from input 1, normalised; fails naming the node for a bad dtype, shape or value.
int64_t read_axis(const Tensor& axis, int64_t rank, const std::string& where) {
  if ((axis.dtype() != DType::kInt64 && axis.dtype() != DType::kInt32) || axis.numel() != 1 ||
      axis.rank() > 1) {
    throw Error(where + ": input 1 (axis) must be an int32 or int64 scalar, got " +
                std::string(dtype_name(axis.dtype())) + " " + shape_str(axis.shape()));
  }
  return normalize_axis(axis.scalar_as_int64(0), rank, where, "input 1 (axis)");
}

void infer_cum_sum(InferContext& ctx) {
  expect_opset_at_least(ctx, 11);
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(0, kNumericDTypes);
  ctx.expect_dtype(1, {DType::kInt32, DType::kInt64});
  attr_bool(ctx, "exclusive", false);
  attr_bool(ctx, "reverse", false);
  const Shape& x = ctx.input(0).shape;
  if (x.empty()) ctx.fail("input 0 is a scalar; CumSum needs rank >= 1");
  if (ctx.input(1).constant) {
    read_axis(*ctx.input(1).constant, static_cast<int64_t>(x.size()), ctx.where);
  }
  ctx.outputs[0] = {ctx.input(0).dtype, x};
}

void compute_cum_sum(ComputeContext& ctx) {
  const std::string where = node_where(ctx.node);
  const Tensor& xt = ctx.input(0);
  const Shape& x = xt.shape();
  const int64_t axis = read_axis(ctx.input(1), static_cast<int64_t>(x.size()), where);
  // infer_cum_sum checked both flags.
  const bool exclusive = ctx.node.attrs.get_int("exclusive", 0) == 1;
  const bool reverse = ctx.node.attrs.get_int("reverse", 0) == 1;
  const int64_t n = x[static_cast<size_t>(axis)];
  const int64_t inner = shape_numel(Shape(x.begin() + axis + 1, x.end()));
  const int64_t outer = shape_numel(Shape(x.begin(), x.begin() + axis));
  dispatch_numeric(xt.dtype(), where, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* in = xt.data<T>();
    T* out = ctx.outputs[0].data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        C sum{};
        for (int64_t s = 0; s < n; ++s) {
          const int64_t j = reverse ? n - 1 - s : s;
          const int64_t at = (o * n + j) * inner + i;
          const C v = to_compute(in[at]);
          if (!exclusive) sum = wrapping_add(sum, v);
          out[at] = from_compute<T>(sum);
          if (exclusive) sum = wrapping_add(sum, v);
        }
      }
    }
  });
}

}  // namespace

TESSERA_REGISTER_OP("CumSum", infer_cum_sum, compute_cum_sum);

}  // namespace tessera::ops
