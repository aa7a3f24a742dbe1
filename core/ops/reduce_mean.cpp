// ReduceMean (ONNX opsets 1-18) on float32: the mean over `axes` (the attribute before opset 18,
// the optional constant int64 input 1 from opset 18), keeping reduced dims as 1s when keepdims
// = 1 (the default). No axes means every axis, unless noop_with_empty_axes = 1 (opset 18), which
// makes the op an identity.
#include <string>
#include <vector>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

// Which axes of x are reduced: an empty result with `noop` set means "reduce nothing".
std::vector<bool> reduced_axes(const InferContext& ctx, bool& noop) {
  const int64_t rank = static_cast<int64_t>(ctx.input(0).shape.size());
  std::vector<int64_t> axes;
  noop = false;
  if (ctx.opset >= 18) {
    if (ctx.node.attrs.has("axes")) {
      ctx.fail("attribute 'axes' was replaced by input 1 in opset 18; pass the axes as an input");
    }
    if (ctx.has_input(1)) {
      const Tensor& t = ctx.constant_input(1);
      if (t.dtype() != DType::kInt64 || t.rank() > 1) {
        ctx.fail("input 1 (axes) must be a 1-D int64 tensor, got " +
                 std::string(dtype_name(t.dtype())) + " " + shape_str(t.shape()));
      }
      axes = t.to_int64_vector();
    }
    if (axes.empty() && attr_bool(ctx, "noop_with_empty_axes", false)) noop = true;
  } else {
    if (ctx.num_inputs() > 1) {
      ctx.fail("takes one input before opset 18 (axes is an attribute), got " +
               std::to_string(ctx.num_inputs()));
    }
    axes = attr_ints(ctx, "axes", {});
  }
  std::vector<bool> reduce(static_cast<size_t>(rank), axes.empty() && !noop);
  for (int64_t a : normalize_axes(axes, rank, ctx.where, "axes"))
    reduce[static_cast<size_t>(a)] = true;
  return reduce;
}

Shape reduced_shape(const Shape& x, const std::vector<bool>& reduce, bool keepdims) {
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

void infer_reduce_mean(InferContext& ctx) {
  ctx.expect_inputs(1, 2);
  ctx.expect_dtype(0, {DType::kFloat32});
  const bool keepdims = attr_bool(ctx, "keepdims", true);
  bool noop = false;
  const std::vector<bool> reduce = reduced_axes(ctx, noop);
  ctx.outputs.at(0) = {DType::kFloat32, reduced_shape(ctx.input(0).shape, reduce, keepdims)};
}

void compute_reduce_mean(ComputeContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const Shape& x = xt.shape();
  // The axes were validated by infer; rebuild them from a fresh context over the same inputs.
  InferContext ictx(ctx.node, ctx.opset, node_where(ctx.node));
  ictx.inputs.resize(ctx.inputs.size());
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (!ctx.has_input(i)) continue;
    ictx.inputs[i] = {true, ctx.inputs[i]->dtype(), ctx.inputs[i]->shape(), ctx.inputs[i]};
  }
  bool noop = false;
  const std::vector<bool> reduce = reduced_axes(ictx, noop);

  // Output element of each input element: drop (or zero) the reduced coordinates.
  const Shape kept = reduced_shape(x, reduce, /*keepdims=*/true);
  const std::vector<int64_t> kept_strides = shape_strides(kept);
  const std::vector<int64_t> x_strides = shape_strides(x);
  const int64_t out_count = shape_numel(kept);
  const int64_t group = out_count == 0 ? 0 : xt.numel() / out_count;
  std::vector<double> sums(static_cast<size_t>(out_count), 0.0);
  const float* xd = xt.data<float>();
  for (int64_t i = 0; i < xt.numel(); ++i) {
    int64_t out = 0;
    for (size_t d = 0; d < x.size(); ++d) {
      const int64_t coord = (i / x_strides[d]) % x[d];
      if (!reduce[d]) out += coord * kept_strides[d];
    }
    sums[static_cast<size_t>(out)] += xd[i];
  }
  float* y = ctx.outputs[0].data<float>();
  for (int64_t o = 0; o < out_count; ++o) {
    // A reduction over zero elements is 0/0 = NaN, as in numpy.
    y[o] = static_cast<float>(sums[static_cast<size_t>(o)] / static_cast<double>(group));
  }
}

}  // namespace

TESSERA_REGISTER_OP("ReduceMean", infer_reduce_mean, compute_reduce_mean);

}  // namespace tessera::ops
