// Shared pieces of the variadic elementwise ops (Max, Min, Sum, Mean): one or more inputs of one
// dtype, numpy broadcasting from opset 8 (equal shapes before), and the naive left fold over the
// broadcast output. Header-only for the same reason as broadcast.hpp.
#pragma once

#include <string>
#include <vector>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/broadcast.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {

// Shape inference: every input present, of one of `allowed` dtypes and of input 0's dtype; the
// output has the broadcast shape.
inline void infer_variadic(InferContext& ctx, std::initializer_list<DType> allowed) {
  if (ctx.num_inputs() == 0) ctx.fail("expects at least 1 input, got 0");
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    ctx.expect_dtype(i, allowed);
    if (ctx.input(i).dtype != ctx.input(0).dtype) {
      ctx.fail("input " + std::to_string(i) + " has dtype " + dtype_name(ctx.input(i).dtype) +
               " but input 0 has " + dtype_name(ctx.input(0).dtype) +
               "; insert a Cast so they match");
    }
    if (ctx.opset < 8 && ctx.input(i).shape != ctx.input(0).shape) {
      ctx.fail("input " + std::to_string(i) + " has shape " + shape_str(ctx.input(i).shape) +
               " but input 0 has " + shape_str(ctx.input(0).shape) +
               "; before opset 8 the inputs must have equal shapes (no broadcasting)");
    }
    shapes.push_back(ctx.input(i).shape);
  }
  ctx.outputs.at(0) = {ctx.input(0).dtype, broadcast_shapes(shapes, ctx.where)};
}

// Max and Min: float32 and float16, and the integer types from opset 12.
inline void infer_variadic_max_min(InferContext& ctx) {
  if (ctx.opset >= 12) {
    infer_variadic(ctx, kNumericDTypes);
  } else {
    infer_variadic(ctx, kFloatDTypes);
  }
}

// y = finish(combine(...combine(combine(x0, x1), x2)..., xn), n) elementwise over the broadcast
// output, in the inputs' order and in ComputeType (float for float16); infer has already
// limited the dtypes to those the op defines.
template <typename Combine, typename Finish>
void compute_variadic(ComputeContext& ctx, Combine combine, Finish finish) {
  Tensor& out = ctx.outputs[0];
  dispatch_numeric(out.dtype(), node_where(ctx.node), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    std::vector<C> acc(static_cast<size_t>(out.numel()));
    for (size_t k = 0; k < ctx.inputs.size(); ++k) {
      const Tensor& in = ctx.input(k);
      const BroadcastIndexer idx(in.shape(), out.shape());
      const T* pin = in.data<T>();
      for (int64_t i = 0; i < out.numel(); ++i) {
        const C v = to_compute(pin[idx.offset(i)]);
        C& a = acc[static_cast<size_t>(i)];
        a = k == 0 ? v : static_cast<C>(combine(a, v));
      }
    }
    const int64_t n = static_cast<int64_t>(ctx.inputs.size());
    T* po = out.data<T>();
    for (int64_t i = 0; i < out.numel(); ++i) {
      po[i] = from_compute<T>(static_cast<C>(finish(acc[static_cast<size_t>(i)], n)));
    }
  });
}

}  // namespace tessera::ops
