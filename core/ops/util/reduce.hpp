// Shared pieces of the Reduce* op files (ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd,
// ReduceL2): which axes are reduced (the attribute 'axes' before the opset where it became input
// 1, the constant int64 input from then on; ReduceSum moved at 13, the others at 18), keepdims,
// noop_with_empty_axes, the output shape, and the naive fold over the reduced elements.
//
// Header-only for the same reason as broadcast.hpp.
#pragma once

#include <string>
#include <vector>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/elementwise.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {

// Which axes of input 0 are reduced. `axes_input_opset` is the first opset where the axes are
// input 1 instead of an attribute. No axes means every axis, unless noop_with_empty_axes = 1
// (an attribute from that same opset), which reduces nothing: the op is then an identity.
inline std::vector<bool> reduced_axes(const InferContext& ctx, int64_t axes_input_opset) {
  const int64_t rank = static_cast<int64_t>(ctx.input(0).shape.size());
  const std::string since = std::to_string(axes_input_opset);
  std::vector<int64_t> axes;
  bool noop = false;
  std::string what = "attribute 'axes'";
  if (ctx.opset >= axes_input_opset) {
    if (ctx.node.attrs.has("axes")) {
      ctx.fail("attribute 'axes' was replaced by input 1 in opset " + since +
               "; pass the axes as an input");
    }
    if (ctx.has_input(1)) {
      const Tensor& t = ctx.constant_input(1);
      if (t.dtype() != DType::kInt64 || t.rank() > 1) {
        ctx.fail("input 1 (axes) must be a 1-D int64 tensor, got " +
                 std::string(dtype_name(t.dtype())) + " " + shape_str(t.shape()));
      }
      axes = t.to_int64_vector();
    }
    what = "input 1 (axes)";
    if (axes.empty() && attr_bool(ctx, "noop_with_empty_axes", false)) noop = true;
  } else {
    if (ctx.num_inputs() > 1) {
      ctx.fail("takes one input before opset " + since + " (axes is an attribute), got " +
               std::to_string(ctx.num_inputs()));
    }
    // A stray 0 (the default) changes nothing and is tolerated; anything else would be ignored.
    if (attr_int(ctx, "noop_with_empty_axes", 0) != 0) {
      ctx.fail("attribute 'noop_with_empty_axes' exists from opset " + since + " on; this model " +
               "imports opset " + std::to_string(ctx.opset));
    }
    axes = attr_ints(ctx, "axes", {});
  }
  std::vector<bool> reduce(static_cast<size_t>(rank), axes.empty() && !noop);
  for (int64_t a : normalize_axes(axes, rank, ctx.where, what))
    reduce[static_cast<size_t>(a)] = true;
  return reduce;
}

// The output shape: reduced dims become 1 with keepdims, and are dropped without.
inline Shape reduced_shape(const Shape& x, const std::vector<bool>& reduce, bool keepdims) {
  Shape y;
  for (size_t d = 0; d < x.size(); ++d) {
    if (!reduce[d]) {
      y.push_back(x[d]);
    } else if (keepdims) {
      y.push_back(1);
    }
  }
  return y;
}

// Shape inference of a Reduce* op: input 0 of one of `allowed` dtypes, the output of the same
// dtype in reduced_shape().
inline void infer_reduce(InferContext& ctx, int64_t axes_input_opset,
                         std::initializer_list<DType> allowed) {
  ctx.expect_inputs(1, 2);
  ctx.expect_dtype(0, allowed);
  const bool keepdims = attr_bool(ctx, "keepdims", true);
  const std::vector<bool> reduce = reduced_axes(ctx, axes_input_opset);
  ctx.outputs.at(0) = {ctx.input(0).dtype, reduced_shape(ctx.input(0).shape, reduce, keepdims)};
}

// ReduceMax and ReduceMin: the numeric dtypes, and bool from opset 20.
inline void infer_reduce_max_min(InferContext& ctx, int64_t axes_input_opset) {
  if (ctx.opset >= 20) {
    infer_reduce(ctx, axes_input_opset,
                 {DType::kFloat32, DType::kFloat16, DType::kInt64, DType::kInt32, DType::kInt8,
                  DType::kUInt8, DType::kBool});
  } else {
    infer_reduce(ctx, axes_input_opset, kNumericDTypes);
  }
}

// reduced_axes() at run time. Infer validated the axes; this rebuilds them from a context over
// the same inputs instead of caching state between the two.
inline std::vector<bool> reduced_axes_for_compute(const ComputeContext& ctx,
                                                  int64_t axes_input_opset) {
  InferContext ictx(ctx.node, ctx.opset, node_where(ctx.node));
  ictx.inputs.resize(ctx.inputs.size());
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (!ctx.has_input(i)) continue;
    ictx.inputs[i] = {true, ctx.inputs[i]->dtype(), ctx.inputs[i]->shape(), ctx.inputs[i]};
  }
  return reduced_axes(ictx, axes_input_opset);
}

// The naive reduction of x (element type T, read as ComputeType<T>) into y (the same type):
// for every output element, acc = init, then acc = step(acc, v) over the input elements that
// map to it in row-major order, then y = finish(acc, count), count being the number of elements
// folded (0 when a reduced dim is 0, and init is then what finish sees).
template <typename T, typename Acc, typename Step, typename Finish>
void reduce_elements(const Tensor& xt, const std::vector<bool>& reduce, Tensor& yt, Acc init,
                     Step step, Finish finish) {
  const Shape& x = xt.shape();
  // Output element of each input element: drop (or zero) the reduced coordinates.
  const Shape kept = reduced_shape(x, reduce, /*keepdims=*/true);
  const std::vector<int64_t> kept_strides = shape_strides(kept);
  const std::vector<int64_t> x_strides = shape_strides(x);
  const int64_t out_count = shape_numel(kept);
  Shape reduced_dims;
  for (size_t d = 0; d < x.size(); ++d) {
    if (reduce[d]) reduced_dims.push_back(x[d]);
  }
  // Checked: with a kept dim of 0 the reduced dims' product is not bounded by numel.
  const int64_t group = shape_numel(reduced_dims);
  std::vector<Acc> acc(static_cast<size_t>(out_count), init);
  const T* xd = xt.data<T>();
  for (int64_t i = 0; i < xt.numel(); ++i) {
    int64_t out = 0;
    for (size_t d = 0; d < x.size(); ++d) {
      const int64_t coord = (i / x_strides[d]) % x[d];
      if (!reduce[d]) out += coord * kept_strides[d];
    }
    // No reference into acc: std::vector<bool> (ReduceMax/Min on bool) hands out proxies.
    acc[static_cast<size_t>(out)] = step(acc[static_cast<size_t>(out)], to_compute(xd[i]));
  }
  T* y = yt.data<T>();
  for (int64_t o = 0; o < out_count; ++o) {
    y[o] = from_compute<T>(static_cast<ComputeType<T>>(finish(acc[static_cast<size_t>(o)], group)));
  }
}

}  // namespace tessera::ops
