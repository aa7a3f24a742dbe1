// Concat: joins inputs along 'axis' (required; negative from opset 11). All inputs share dtype,
// rank and every other dim. Any dtype.
#include <cstring>

#include "op.hpp"
#include "util/axes.hpp"

namespace tessera::ops {
namespace {

void infer_concat(InferContext& ctx) {
  if (ctx.num_inputs() < 1) ctx.fail("expects at least 1 input, got 0");
  const InputInfo& first = ctx.input(0);
  const int64_t rank = static_cast<int64_t>(first.shape.size());
  if (!ctx.node.attrs.has("axis")) ctx.fail("attribute 'axis' is required");
  const int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis"), rank, ctx.where);
  Shape out = first.shape;
  out[static_cast<size_t>(axis)] = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const InputInfo& in = ctx.input(i);
    if (in.dtype != first.dtype) {
      ctx.fail("input " + std::to_string(i) + " has dtype " + dtype_name(in.dtype) +
               " but input 0 has " + dtype_name(first.dtype));
    }
    bool compatible = in.shape.size() == first.shape.size();
    for (size_t d = 0; compatible && d < in.shape.size(); ++d) {
      compatible = d == static_cast<size_t>(axis) || in.shape[d] == first.shape[d];
    }
    if (!compatible) {
      ctx.fail("input " + std::to_string(i) + " has shape " + shape_str(in.shape) +
               ", incompatible with input 0 " + shape_str(first.shape) + " (all dims but axis " +
               std::to_string(axis) + " must match)");
    }
    out[static_cast<size_t>(axis)] += in.shape[static_cast<size_t>(axis)];
  }
  ctx.outputs[0] = {first.dtype, out};
}

void compute_concat(ComputeContext& ctx) {
  Tensor& y = ctx.outputs[0];
  const int64_t axis =
      normalize_axis(ctx.node.attrs.get_int("axis"), y.rank(), "node '" + ctx.node.name + "'");
  // View every tensor as [outer, dim(axis) * inner] and copy row blocks.
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= y.shape()[static_cast<size_t>(d)];
  const size_t size = dtype_size(y.dtype());
  const size_t out_row = static_cast<size_t>(y.numel() / (outer == 0 ? 1 : outer)) * size;
  auto* dst = static_cast<std::byte*>(y.raw());
  size_t column = 0;  // byte offset of the current input's block inside an output row
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const Tensor& x = ctx.input(i);
    if (outer == 0 || x.numel() == 0) continue;
    const size_t in_row = static_cast<size_t>(x.numel() / outer) * size;
    const auto* src = static_cast<const std::byte*>(x.raw());
    for (int64_t r = 0; r < outer; ++r) {
      std::memcpy(dst + static_cast<size_t>(r) * out_row + column,
                  src + static_cast<size_t>(r) * in_row, in_row);
    }
    column += in_row;
  }
}

}  // namespace

TESSERA_REGISTER_OP("Concat", infer_concat, compute_concat);

}  // namespace tessera::ops
