// SpaceToDepth (ONNX opsets 1-13), any dtype: [N, C, H, W] -> [N, C * b^2, H / b, W / b], the
// inverse of DepthToSpace in DCR mode:
//   y[n, (i*b + j) * C + c, h, w] = x[n, c, h*b + i, w*b + j]
#include <string>
#include <vector>

#include "op.hpp"
#include "util/checked.hpp"
#include "util/layout.hpp"

namespace tessera::ops {
namespace {

void infer_space_to_depth(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  expect_nchw4(ctx);
  const int64_t b = attr_blocksize(ctx);
  const Shape& x = ctx.input(0).shape;
  if (x[2] % b != 0 || x[3] % b != 0) {
    ctx.fail("attribute 'blocksize' = " + std::to_string(b) + " does not divide the spatial dims " +
             std::to_string(x[2]) + " x " + std::to_string(x[3]) + " of input 0");
  }
  const int64_t block = checked_mul(ctx, b, b, "attribute 'blocksize' squared");
  ctx.outputs.at(0) = {
      ctx.input(0).dtype,
      {x[0], checked_mul(ctx, x[1], block, "output channels"), x[2] / b, x[3] / b}};
}

void compute_space_to_depth(ComputeContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const Shape& x = xt.shape();
  const int64_t b = ctx.node.attrs.get_int("blocksize");
  gather_elements(xt, ctx.outputs[0], [&](const std::vector<int64_t>& o) {
    const int64_t c = o[1] % x[1];
    const int64_t block = o[1] / x[1];
    const int64_t h = o[2] * b + block / b, w = o[3] * b + block % b;
    return ((o[0] * x[1] + c) * x[2] + h) * x[3] + w;
  });
}

}  // namespace

TESSERA_REGISTER_OP("SpaceToDepth", infer_space_to_depth, compute_space_to_depth);

}  // namespace tessera::ops
