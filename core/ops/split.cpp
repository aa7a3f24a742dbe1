// Split: cuts the input along 'axis' (default 0) into the node's outputs. Sizes come from
// 'split' (an attribute before opset 13, a constant input from 13), else from 'num_outputs'
// (opset 18: chunks of ceil(dim / n), the last one smaller), else equal parts. Any dtype.
#include <cstring>

#include "op.hpp"
#include "tessera/checked_math.hpp"
#include "util/axes.hpp"

namespace tessera::ops {
namespace {

std::vector<int64_t> split_sizes(InferContext& ctx, int64_t dim) {
  const size_t n_out = ctx.node.outputs.size();
  std::vector<int64_t> sizes;
  const bool split_is_input = ctx.opset >= 13 || ctx.opset < 2;
  if (split_is_input && ctx.has_input(1)) {
    ctx.expect_dtype(1, {DType::kInt64});
    sizes = ctx.constant_input(1).to_int64_vector();
  } else if (!split_is_input && ctx.node.attrs.has("split")) {
    sizes = ctx.node.attrs.get_ints("split");
  } else if (ctx.opset >= 18 && ctx.node.attrs.has("num_outputs")) {
    const int64_t n = ctx.node.attrs.get_int("num_outputs");
    if (n < 1 || static_cast<size_t>(n) != n_out) {
      ctx.fail("attribute 'num_outputs' = " + std::to_string(n) + " but the node has " +
               std::to_string(n_out) + " outputs");
    }
    const int64_t chunk = (dim + n - 1) / n;
    if (chunk * (n - 1) >= dim && dim > 0) {
      ctx.fail("cannot split dim " + std::to_string(dim) + " into " + std::to_string(n) +
               " chunks of " + std::to_string(chunk) + " (the last chunk would be empty)");
    }
    sizes.assign(static_cast<size_t>(n), chunk);
    sizes.back() = dim - chunk * (n - 1);
    if (dim == 0) sizes.assign(static_cast<size_t>(n), 0);
  } else {
    // Neither given: equal parts, one per output (what ONNX Runtime does for every opset).
    if (n_out == 0 || dim % static_cast<int64_t>(n_out) != 0) {
      ctx.fail("dim " + std::to_string(dim) + " does not split evenly into " +
               std::to_string(n_out) + " outputs; give 'split' sizes" +
               (ctx.opset >= 18 ? " or 'num_outputs'" : ""));
    }
    sizes.assign(n_out, dim / static_cast<int64_t>(n_out));
  }
  if (sizes.size() != n_out) {
    ctx.fail("'split' " + shape_str(sizes) + " has " + std::to_string(sizes.size()) +
             " entries but the node has " + std::to_string(n_out) + " outputs");
  }
  for (int64_t s : sizes) {
    if (s < 0) ctx.fail("'split' " + shape_str(sizes) + " has a negative size");
  }
  // Checked: hostile sizes must not overflow the sum (-1 then: no dim is negative).
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (!try_add(total, s, total)) {
      total = -1;
      break;
    }
  }
  if (total != dim) {
    ctx.fail("'split' " + shape_str(sizes) + " does not add up to dim " + std::to_string(dim) +
             " of the split axis");
  }
  return sizes;
}

void infer_split(InferContext& ctx) {
  ctx.expect_inputs(1, 2);
  const Shape& in = ctx.input(0).shape;
  const int64_t axis =
      normalize_axis(ctx.node.attrs.get_int("axis", 0), static_cast<int64_t>(in.size()), ctx.where);
  const std::vector<int64_t> sizes = split_sizes(ctx, in[static_cast<size_t>(axis)]);
  for (size_t i = 0; i < sizes.size(); ++i) {
    Shape out = in;
    out[static_cast<size_t>(axis)] = sizes[i];
    ctx.outputs[i] = {ctx.input(0).dtype, out};
  }
}

void compute_split(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t axis =
      normalize_axis(ctx.node.attrs.get_int("axis", 0), x.rank(), "node '" + ctx.node.name + "'");
  // View the input as [outer, dim(axis) * inner]; each output takes a column block of every row.
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[static_cast<size_t>(d)];
  if (outer == 0) return;
  const size_t size = dtype_size(x.dtype());
  const size_t in_row = static_cast<size_t>(x.numel() / outer) * size;
  const auto* src = static_cast<const std::byte*>(x.raw());
  size_t column = 0;
  for (Tensor& y : ctx.outputs) {
    const size_t out_row = static_cast<size_t>(y.numel() / outer) * size;
    auto* dst = static_cast<std::byte*>(y.raw());
    for (int64_t r = 0; r < outer; ++r) {
      std::memcpy(dst + static_cast<size_t>(r) * out_row,
                  src + static_cast<size_t>(r) * in_row + column, out_row);
    }
    column += out_row;
  }
}

}  // namespace

TESSERA_REGISTER_OP("Split", infer_split, compute_split);

}  // namespace tessera::ops
