// TopK: the k largest (or, with largest = 0, smallest) elements along attribute 'axis' (default
// -1) and their int64 indices, sorted (ties keep the lower index first, as the spec requires).
// k is the constant input 1 from opset 10 and attribute 'k' before; 'largest' and 'sorted' exist
// from opset 11. With sorted = 0 the order is unspecified, and this kernel sorts anyway. A NaN
// counts as larger than every number, as in numpy's sort. float32, float16, int64, int32, int8,
// uint8.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/elementwise.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

struct TopKAttrs {
  int64_t axis = 0;  // normalized
  int64_t k = 0;
  bool largest = true;
};

TopKAttrs read_attrs(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  if (x.empty()) ctx.fail("input 0 is a scalar; TopK needs rank >= 1");
  TopKAttrs a;
  a.axis = normalize_axis(attr_int(ctx, "axis", -1), static_cast<int64_t>(x.size()), ctx.where);
  std::string k_name;
  if (ctx.opset >= 10) {
    ctx.expect_inputs(2, 2);
    if (ctx.node.attrs.has("k")) {
      ctx.fail("attribute 'k' was replaced by input 1 (K) in opset 10; pass k as an input");
    }
    const Tensor& k = ctx.constant_input(1);
    if (k.dtype() != DType::kInt64 || k.numel() != 1 || k.rank() > 1) {
      ctx.fail("input 1 (K) must be a 1-D int64 tensor of one value, got " +
               std::string(dtype_name(k.dtype())) + " " + shape_str(k.shape()));
    }
    a.k = k.scalar_as_int64(0);
    k_name = "input 1 (K)";
  } else {
    ctx.expect_inputs(1, 1);
    if (!ctx.node.attrs.has("k")) ctx.fail("required attribute 'k' is missing (opset < 10)");
    a.k = attr_int(ctx, "k", 0);
    k_name = "attribute 'k'";
  }
  const int64_t dim = x[static_cast<size_t>(a.axis)];
  if (a.k < 0 || a.k > dim) {
    ctx.fail(k_name + " = " + std::to_string(a.k) + " is out of range [0, " + std::to_string(dim) +
             "] for axis " + std::to_string(a.axis) + " of " + shape_str(x));
  }
  if (ctx.opset < 11) {
    // Only the default 1 is meaningful before opset 11; any other value would be ignored.
    for (const char* name : {"largest", "sorted"}) {
      if (attr_int(ctx, name, 1) != 1) {
        ctx.fail(std::string("attribute '") + name +
                 "' exists from opset 11 on; this model imports opset " +
                 std::to_string(ctx.opset));
      }
    }
  }
  a.largest = attr_bool(ctx, "largest", true);
  attr_bool(ctx, "sorted", true);  // validated only: the output is always sorted
  return a;
}

void infer_top_k(InferContext& ctx) {
  ctx.expect_dtype(0, kNumericDTypes);
  const TopKAttrs a = read_attrs(ctx);
  if (ctx.outputs.size() != 2) {
    ctx.fail("has " + std::to_string(ctx.outputs.size()) +
             " outputs; expected 2 (Values, Indices)");
  }
  Shape y = ctx.input(0).shape;
  y[static_cast<size_t>(a.axis)] = a.k;
  ctx.outputs[0] = {ctx.input(0).dtype, y};
  ctx.outputs[1] = {DType::kInt64, y};
}

// A strict weak order with NaN above every number (plain < on NaN is not one, and std::sort
// then has undefined behaviour).
template <typename C>
bool less_nan_last(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

void compute_top_k(ComputeContext& ctx) {
  const Tensor& xt = ctx.input(0);
  InferContext ictx(ctx.node, ctx.opset, node_where(ctx.node));
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    ictx.inputs.push_back({ctx.has_input(i), ctx.has_input(i) ? ctx.inputs[i]->dtype() : DType{},
                           ctx.has_input(i) ? ctx.inputs[i]->shape() : Shape{}, ctx.inputs[i]});
  }
  const TopKAttrs a = read_attrs(ictx);
  const Shape& x = xt.shape();
  const int64_t n = x[static_cast<size_t>(a.axis)];
  const int64_t inner = shape_numel(Shape(x.begin() + a.axis + 1, x.end()));
  const int64_t outer = shape_numel(Shape(x.begin(), x.begin() + a.axis));
  int64_t* indices = ctx.outputs[1].data<int64_t>();
  dispatch_numeric(xt.dtype(), ictx.where, [&](auto tag) {
    using T = decltype(tag);
    const T* xd = xt.data<T>();
    T* values = ctx.outputs[0].data<T>();
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const T* row = xd + o * n * inner + i;  // element j is row[j * inner]
        auto at = [&](int64_t j) { return to_compute(row[j * inner]); };
        std::iota(order.begin(), order.end(), int64_t{0});
        // stable_sort keeps equal elements in index order: the lower index comes first.
        std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
          return a.largest ? less_nan_last(at(q), at(p)) : less_nan_last(at(p), at(q));
        });
        for (int64_t j = 0; j < a.k; ++j) {
          const int64_t out = (o * a.k + j) * inner + i;
          values[out] = row[order[static_cast<size_t>(j)] * inner];
          indices[out] = order[static_cast<size_t>(j)];
        }
      }
    }
  });
}

}  // namespace

TESSERA_REGISTER_OP("TopK", infer_top_k, compute_top_k);

}  // namespace tessera::ops
