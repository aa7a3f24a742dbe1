// MaxUnpool (opset 9+; ENet, SegNet): a zero tensor with each value of X put back at the position
// its MaxPool's Indices output gives: int64 flat indices into the unpooled shape, per spatial dim
// (in - 1) * stride + kernel - pad_begin - pad_end, batch and channels included. With
// output_shape (input 2) the values keep those coordinates in the larger output (zeros after
// them, as the ONNX reference pads). An index outside the unpooled shape is an error naming the
// node. float32 and float16 (copied as bits).
#include <cstring>

#include "op.hpp"

namespace tessera::ops {
namespace {

// The shape the indices address: (in - 1) * stride + kernel - pads per spatial dim.
Shape unpooled_shape(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  const size_t r = x.size() - 2;
  const std::vector<int64_t> kernel = ctx.node.attrs.get_ints("kernel_shape");
  const std::vector<int64_t> strides =
      ctx.node.attrs.get_ints("strides", std::vector<int64_t>(r, 1));
  const std::vector<int64_t> pads = ctx.node.attrs.get_ints("pads", std::vector<int64_t>(2 * r, 0));
  if (kernel.size() != r || strides.size() != r || pads.size() != 2 * r) {
    ctx.fail("kernel_shape, strides and pads must have one entry per spatial dim (pads two)");
  }
  Shape out = {x[0], x[1]};
  for (size_t i = 0; i < r; ++i) {
    if (kernel[i] < 1 || kernel[i] > (int64_t{1} << 30) || strides[i] < 1 ||
        strides[i] > (int64_t{1} << 30) || x[i + 2] < 1) {
      ctx.fail("kernel_shape and strides must be in [1, 2^30] over a non-empty X");
    }
    const int64_t d = (x[i + 2] - 1) * strides[i] + kernel[i] - pads[i] - pads[i + r];
    if (d < 1 || d > (int64_t{1} << 40)) {
      ctx.fail("the unpooled extent " + std::to_string(d) + " of spatial dim " + std::to_string(i) +
               " is out of range");
    }
    out.push_back(d);
  }
  return out;
}

// Input 2 when given (each spatial dim at least the unpooled one), else the unpooled shape.
Shape output_shape(const InferContext& ctx) {
  const Shape unpooled = unpooled_shape(ctx);
  if (!ctx.has_input(2)) return unpooled;
  const Shape out = ctx.constant_input(2).to_int64_vector();
  if (out.size() != unpooled.size() || out[0] != unpooled[0] || out[1] != unpooled[1]) {
    ctx.fail("output_shape " + shape_str(out) + " must have X's rank, batch and channels");
  }
  for (size_t d = 2; d < out.size(); ++d) {
    if (out[d] < unpooled[d] || out[d] > (int64_t{1} << 40)) {
      ctx.fail("output_shape " + shape_str(out) + " is smaller than the unpooled shape " +
               shape_str(unpooled) + " or too large");
    }
  }
  return out;
}

void infer_max_unpool(InferContext& ctx) {
  ctx.expect_inputs(2, 3);
  ctx.expect_dtype(0, {DType::kFloat32, DType::kFloat16});
  ctx.expect_dtype(1, {DType::kInt64});
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 3) ctx.fail("X must be [N, C, D1, ...], got " + shape_str(x));
  if (ctx.input(1).shape != x) ctx.fail("I must be shaped like X " + shape_str(x));
  if (ctx.has_input(2)) ctx.expect_dtype(2, {DType::kInt64});
  ctx.outputs[0] = {ctx.input(0).dtype, output_shape(ctx)};
}

void compute_max_unpool(ComputeContext& ctx) {
  const InferContext ictx = context_of_constants(ctx);
  const Shape unpooled = unpooled_shape(ictx);
  const Tensor& x = ctx.input(0);
  const std::vector<int64_t> idx = ctx.input(1).to_int64_vector();
  Tensor& y = ctx.outputs[0];
  const Shape& out = y.shape();
  const size_t bytes = dtype_size(x.dtype());
  std::memset(y.raw(), 0, y.nbytes());
  const auto* src = static_cast<const std::byte*>(x.raw());
  auto* dst = static_cast<std::byte*>(y.raw());
  const int64_t total = shape_numel(unpooled);
  for (size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0 || idx[i] >= total) {
      throw Error(ictx.where + ": index " + std::to_string(idx[i]) + " at position " +
                  std::to_string(i) + " is outside the unpooled shape " + shape_str(unpooled));
    }
    // The same coordinates in the output, whose dims are at least the unpooled ones.
    int64_t rest = idx[i], at = 0, scale = 1;
    for (size_t d = unpooled.size(); d-- > 0;) {
      at += (rest % unpooled[d]) * scale;
      rest /= unpooled[d];
      scale *= out[d];
    }
    std::memcpy(dst + static_cast<size_t>(at) * bytes, src + i * bytes, bytes);
  }
}

}  // namespace

TESSERA_REGISTER_OP("MaxUnpool", infer_max_unpool, compute_max_unpool);

}  // namespace tessera::ops
