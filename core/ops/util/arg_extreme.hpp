// ArgMax and ArgMin's shared part: the int64 index of the largest (smallest) element along
// attribute 'axis' (default 0), keeping the axis as a 1 when keepdims = 1 (the default). Ties give
// the first index, or the last with select_last_index = 1 (opset 12). A NaN wins over every number
// (the first NaN, as numpy's argmax and argmin). float32, float16, int64, int32, int8, uint8.
#pragma once

#include <cmath>
#include <string>

#include "../op.hpp"
#include "axes.hpp"
#include "elementwise.hpp"
#include "pooling.hpp"

namespace tessera::ops {

struct ArgExtremeAttrs {
  int64_t axis = 0;  // normalized
  bool keepdims = true;
  bool select_last_index = false;
};

inline ArgExtremeAttrs read_arg_attrs(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  if (x.empty()) ctx.fail("input 0 is a scalar; " + ctx.node.op_type + " needs rank >= 1");
  ArgExtremeAttrs a;
  a.axis = normalize_axis(attr_int(ctx, "axis", 0), static_cast<int64_t>(x.size()), ctx.where);
  a.keepdims = attr_bool(ctx, "keepdims", true);
  // Before opset 12 only the default 0 is meaningful; any other value would be ignored.
  if (ctx.opset < 12 && attr_int(ctx, "select_last_index", 0) != 0) {
    ctx.fail("attribute 'select_last_index' exists from opset 12 on; this model imports opset " +
             std::to_string(ctx.opset));
  }
  a.select_last_index = attr_bool(ctx, "select_last_index", false);
  if (x[static_cast<size_t>(a.axis)] == 0) {
    ctx.fail("attribute 'axis' = " + std::to_string(a.axis) + " names a dim of size 0 in " +
             shape_str(x) + ": there is no element to index");
  }
  return a;
}

inline void infer_arg_extreme(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, kNumericDTypes);
  const ArgExtremeAttrs a = read_arg_attrs(ctx);
  Shape y = ctx.input(0).shape;
  if (a.keepdims) {
    y[static_cast<size_t>(a.axis)] = 1;
  } else {
    y.erase(y.begin() + a.axis);
  }
  ctx.outputs.at(0) = {DType::kInt64, y};
}

// Whether candidate v replaces the current best b (strictly larger for ArgMax, smaller for
// ArgMin, or equal with select_last_index); a NaN wins over every number, as in numpy.
template <bool kMax, typename C>
bool replaces(C v, C b, bool take_last_tie) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(b)) return take_last_tie && std::isnan(v);
    if (std::isnan(v)) return true;
  }
  if constexpr (kMax) {
    return take_last_tie ? v >= b : v > b;
  } else {
    return take_last_tie ? v <= b : v < b;
  }
}

template <bool kMax>
void compute_arg_extreme(ComputeContext& ctx) {
  const Tensor& xt = ctx.input(0);
  InferContext ictx(ctx.node, ctx.opset, node_where(ctx.node));
  ictx.inputs = {{true, xt.dtype(), xt.shape(), nullptr}};
  const ArgExtremeAttrs a = read_arg_attrs(ictx);
  const Shape& x = xt.shape();
  const size_t axis = static_cast<size_t>(a.axis);
  const int64_t n = x[axis];
  const int64_t inner = shape_numel(Shape(x.begin() + a.axis + 1, x.end()));
  const int64_t outer = shape_numel(Shape(x.begin(), x.begin() + a.axis));
  int64_t* y = ctx.outputs[0].data<int64_t>();
  dispatch_numeric(xt.dtype(), ictx.where, [&](auto tag) {
    using T = decltype(tag);
    const T* xd = xt.data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const T* row = xd + o * n * inner + i;  // element j is row[j * inner]
        int64_t best = 0;
        for (int64_t j = 1; j < n; ++j) {
          if (replaces<kMax>(to_compute(row[j * inner]), to_compute(row[best * inner]),
                             a.select_last_index)) {
            best = j;
          }
        }
        y[o * inner + i] = best;
      }
    }
  });
}

}  // namespace tessera::ops
