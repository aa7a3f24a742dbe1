// ScatterND and ScatterElements' shared part: the 'reduction' attribute (none; add, mul from
// opset 16; max, min from 18) and how an update combines with what is there. Header-only like the
// other op helpers.
#pragma once

#include <string>

#include "../op.hpp"
#include "elementwise.hpp"
#include "pooling.hpp"

namespace tessera::ops {

// The reduction, checked against the ones the model's opset has.
inline std::string read_scatter_reduction(const InferContext& ctx) {
  const std::string r = attr_string(ctx, "reduction", "none");
  const bool known = r == "none" || ((r == "add" || r == "mul") && ctx.opset >= 16) ||
                     ((r == "max" || r == "min") && ctx.opset >= 18);
  if (!known) {
    ctx.fail("attribute 'reduction' = '" + r + "' is not one of none" +
             (ctx.opset >= 16 ? ", add, mul" : "") + (ctx.opset >= 18 ? ", max, min" : "") +
             " at opset " + std::to_string(ctx.opset));
  }
  return r;
}

// The checks both scatters start with: opset 11+, three inputs, indices of one of
// `index_types`, the reduction (returned), and updates of data's dtype (numeric when reducing).
inline std::string check_scatter_inputs(const InferContext& ctx,
                                        std::initializer_list<DType> index_types) {
  expect_opset_at_least(ctx, 11);
  ctx.expect_inputs(3, 3);
  ctx.expect_dtype(1, index_types);
  const std::string reduction = read_scatter_reduction(ctx);
  const DType data = ctx.input(0).dtype, updates = ctx.input(2).dtype;
  if (reduction != "none" && data == DType::kBool) {
    ctx.fail("reduction '" + reduction + "' needs a numeric 'data', got bool");
  }
  if (updates != data) {
    ctx.fail(std::string("inputs 'data' and 'updates' have different dtypes (") + dtype_name(data) +
             " and " + dtype_name(updates) + ")");
  }
  return reduction;
}

// The element after an update u lands on d under `reduction` (add, mul, max or min; checked by
// read_scatter_reduction). Integers wrap; max and min propagate NaN.
template <typename T>
T scatter_combine(const std::string& reduction, T d, T u) {
  const auto a = to_compute(d);
  const auto b = to_compute(u);
  ComputeType<T> r;
  if (reduction == "add") {
    r = wrapping_add(a, b);
  } else if (reduction == "mul") {
    r = wrapping_mul(a, b);
  } else if (reduction == "max") {
    r = max_propagating_nan(a, b);
  } else {
    r = min_propagating_nan(a, b);
  }
  return from_compute<T>(static_cast<ComputeType<T>>(r));
}

}  // namespace tessera::ops
