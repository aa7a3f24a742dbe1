// QuantizeLinear and DequantizeLinear's shared part: the scale and zero point, one for the whole
// tensor or (opset 13+) one per slice along `axis`. Header-only like the other op helpers.
#pragma once

#include <cstdint>
#include <string>

#include "../op.hpp"
#include "axes.hpp"

namespace tessera::ops {

// Where element i of the quantized tensor finds its scale and zero point: index (i / inner) %
// count, or 0 for every element when per tensor (count 1, inner the whole tensor).
struct QuantLayout {
  int64_t count = 1;  // scales
  int64_t inner = 1;  // elements per scale index, innermost
  int64_t index(int64_t i) const { return count == 1 ? 0 : (i / inner) % count; }
};

// Checks inputs 1 (float32 scale) and 2 (optional zero point of the dtype `zero_dtype`, when it
// is not kUndefined) against input 0's shape and returns their layout. A scalar or one-element
// scale is per tensor; a 1-D scale of dims[axis] elements is per axis; the blocked form of
// opset 21 (attribute block_size) is refused as unsupported.
inline QuantLayout check_quant_params(const InferContext& ctx, DType zero_dtype) {
  const Shape& x = ctx.input(0).shape;
  ctx.expect_dtype(1, {DType::kFloat32});
  const Shape& s = ctx.input(1).shape;
  if (ctx.node.attrs.get_int("block_size", 0) != 0) {
    ctx.unsupported("blocked quantization (attribute block_size) is not supported");
  }
  QuantLayout layout;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (s.size() > 1)
    ctx.fail("the scale must be a scalar or 1-D, got rank " + std::to_string(s.size()));
  const int64_t n = s.empty() ? 1 : s[0];
  if (s.size() == 1 && n != 1) {
    if (ctx.opset < 13) ctx.fail("a 1-D scale of more than one element needs opset 13 (axis)");
    const int64_t axis = normalize_axis(ctx.node.attrs.get_int("axis", 1), rank, ctx.where);
    if (x[static_cast<size_t>(axis)] != n) {
      ctx.fail("the scale has " + std::to_string(n) + " elements but axis " + std::to_string(axis) +
               " has " + std::to_string(x[static_cast<size_t>(axis)]));
    }
    layout.count = n;
    for (int64_t d = axis + 1; d < rank; ++d) layout.inner *= x[static_cast<size_t>(d)];
  }
  if (ctx.has_input(2)) {
    if (zero_dtype != DType::kUndefined && ctx.input(2).dtype != zero_dtype) {
      ctx.fail("the zero point's dtype must be the quantized tensor's");
    }
    if (ctx.input(2).shape != s) ctx.fail("the zero point's shape must be the scale's");
  }
  return layout;
}

}  // namespace tessera::ops
