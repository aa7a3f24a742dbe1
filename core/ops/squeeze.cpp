// Squeeze: removes dims of size 1 at 'axes' (an attribute before opset 13, an optional constant
// input from 13; negative ones count from the end), or every size-1 dim when no axes are given.
// Any dtype; returns a view.
#include "op.hpp"
#include "util/axes.hpp"

namespace tessera::ops {
namespace {

void infer_squeeze(InferContext& ctx) {
  std::vector<int64_t> axes;
  bool have_axes = false;
  if (ctx.opset < 13) {
    ctx.expect_inputs(1, 1);
    have_axes = ctx.node.attrs.has("axes");
    if (have_axes) axes = ctx.node.attrs.get_ints("axes");
  } else {
    ctx.expect_inputs(1, 2);
    have_axes = ctx.has_input(1);
    if (have_axes) {
      ctx.expect_dtype(1, {DType::kInt64});
      axes = ctx.constant_input(1).to_int64_vector();
    }
  }
  const Shape& in = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> drop(in.size(), false);
  if (have_axes) {
    for (int64_t a :
         normalize_axes(axes, rank, ctx.where, ctx.opset < 13 ? "attribute 'axes'" : "'axes'")) {
      if (in[static_cast<size_t>(a)] != 1) {
        ctx.fail("cannot squeeze axis " + std::to_string(a) + " of shape " + shape_str(in) +
                 ": its size is " + std::to_string(in[static_cast<size_t>(a)]) + ", not 1");
      }
      drop[static_cast<size_t>(a)] = true;
    }
  } else {
    for (size_t d = 0; d < in.size(); ++d) drop[d] = in[d] == 1;
  }
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!drop[d]) out.push_back(in[d]);
  }
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

void compute_squeeze(ComputeContext& ctx) {
  ctx.outputs[0] = ctx.input(0).reshaped(ctx.outputs[0].shape());
}

}  // namespace

TESSERA_REGISTER_OP("Squeeze", infer_squeeze, compute_squeeze);

}  // namespace tessera::ops
