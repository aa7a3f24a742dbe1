// OneHot (opset 9+): output = values[1] where the index along the new 'axis' (default -1) equals
// indices[...] (negative ones count from the end of depth from opset 11), values[0] elsewhere; an
// index outside
// [-depth, depth) gives a row of values[0]. depth must be known at load time (it sets the shape).
// Indices and depth of any numeric dtype (read as integers; float depth truncates), values of any
// dtype.
#include <cmath>
#include <cstring>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

int64_t read_depth(const InferContext& ctx) {
  const Tensor& t = ctx.constant_input(1);
  if (t.numel() != 1) ctx.fail("depth must be a single value, got " + shape_str(t.shape()));
  const double d = t.dtype() == DType::kFloat32 || t.dtype() == DType::kFloat16
                       ? static_cast<double>(t.to_float_vector()[0])
                       : static_cast<double>(t.to_int64_vector()[0]);
  if (!(d >= 1.0) || d > 1e9) ctx.fail("depth must be in [1, 1e9], got " + std::to_string(d));
  return static_cast<int64_t>(d);
}

void infer_one_hot(InferContext& ctx) {
  ctx.expect_inputs(3, 3);
  ctx.expect_dtype(0, kNumericDTypes);
  ctx.expect_dtype(1, kNumericDTypes);
  if (shape_numel(ctx.input(2).shape) != 2) ctx.fail("values must hold two elements [off, on]");
  const int64_t depth = read_depth(ctx);
  Shape out = ctx.input(0).shape;
  const int64_t rank = static_cast<int64_t>(out.size()) + 1;
  const int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", -1), rank, ctx.where);
  out.insert(out.begin() + axis, depth);
  ctx.outputs[0] = {ctx.input(2).dtype, out};
}

void compute_one_hot(ComputeContext& ctx) {
  const InferContext ictx = context_of_constants(ctx);
  const int64_t depth = read_depth(ictx);
  const Tensor& ind = ctx.input(0);
  const Shape& is = ind.shape();
  const int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", -1),
                                      static_cast<int64_t>(is.size()) + 1, ictx.where);
  std::vector<double> idx;
  if (ind.dtype() == DType::kFloat32 || ind.dtype() == DType::kFloat16) {
    for (float v : ind.to_float_vector()) idx.push_back(std::trunc(v));
  } else {
    for (int64_t v : ind.to_int64_vector()) idx.push_back(static_cast<double>(v));
  }
  // indices as [outer, inner] around the new axis; output [outer, depth, inner].
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(is.size()); ++d) {
    (d < axis ? outer : inner) *= is[static_cast<size_t>(d)];
  }
  const Tensor& values = ctx.input(2);
  const size_t bytes = dtype_size(values.dtype());
  const auto* off = static_cast<const std::byte*>(values.raw());
  const auto* on = off + bytes;
  auto* dst = static_cast<std::byte*>(ctx.outputs[0].raw());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < depth; ++c) {
      for (int64_t i = 0; i < inner; ++i) {
        double v = idx[static_cast<size_t>(o * inner + i)];
        // Negative indices count from the end from opset 11; before, they are out of range.
        if (v < 0 && ctx.opset >= 11) v += static_cast<double>(depth);
        const bool hot = v == static_cast<double>(c);
        std::memcpy(dst + static_cast<size_t>((o * depth + c) * inner + i) * bytes, hot ? on : off,
                    bytes);
      }
    }
  }
}

}  // namespace

TESSERA_REGISTER_OP("OneHot", infer_one_hot, compute_one_hot);

}  // namespace tessera::ops
