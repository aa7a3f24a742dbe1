// Tile (ONNX opsets 6-13), any dtype: output dim d is input dim d * repeats[d], and
// y[o] = x[o mod input shape]. 'repeats' is a 1-D int64 input with one value >= 0 per input dim;
// it decides the output shape, so it must be known at load time.
#include <string>
#include <vector>

#include "op.hpp"
#include "util/checked.hpp"
#include "util/layout.hpp"

namespace tessera::ops {
namespace {

void infer_tile(InferContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(1, {DType::kInt64});
  const Shape& x = ctx.input(0).shape;
  if (ctx.input(0).dtype == DType::kUndefined) ctx.fail("input 0 has no dtype");
  const Tensor& repeats_t = ctx.constant_input(1);
  if (repeats_t.rank() != 1) {
    ctx.fail("input 1 ('repeats') must be 1-D, got shape " + shape_str(repeats_t.shape()));
  }
  const std::vector<int64_t> repeats = repeats_t.to_int64_vector();
  if (repeats.size() != x.size()) {
    ctx.fail("input 1 ('repeats') has " + std::to_string(repeats.size()) +
             " values but input 0 has rank " + std::to_string(x.size()) +
             " (one repeat count per dim)");
  }
  Shape y(x.size());
  for (size_t d = 0; d < x.size(); ++d) {
    if (repeats[d] < 0) {
      ctx.fail("input 1 ('repeats') value " + std::to_string(repeats[d]) + " at dim " +
               std::to_string(d) + " is negative");
    }
    y[d] = checked_mul(ctx, x[d], repeats[d], "output dim " + std::to_string(d));
  }
  ctx.outputs.at(0) = {ctx.input(0).dtype, y};
}

void compute_tile(ComputeContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const Shape& x = xt.shape();
  const std::vector<int64_t> strides = shape_strides(x);
  gather_elements(xt, ctx.outputs[0], [&](const std::vector<int64_t>& o) {
    int64_t offset = 0;
    for (size_t d = 0; d < x.size(); ++d) offset += (o[d] % x[d]) * strides[d];
    return offset;
  });
}

}  // namespace

TESSERA_REGISTER_OP("Tile", infer_tile, compute_tile);

}  // namespace tessera::ops
