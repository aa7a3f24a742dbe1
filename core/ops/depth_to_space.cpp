// DepthToSpace (ONNX opsets 1-13), any dtype: [N, C, H, W] -> [N, C / b^2, H * b, W * b].
// Mode DCR (default; the only one before opset 11) takes the block offset from the outer part of
// the channel index, CRD from the inner part:
//   DCR: y[n, c, h*b + i, w*b + j] = x[n, (i*b + j) * C/b^2 + c, h, w]
//   CRD: y[n, c, h*b + i, w*b + j] = x[n, c * b^2 + i*b + j, h, w]
#include <string>
#include <vector>

#include "op.hpp"
#include "util/checked.hpp"
#include "util/layout.hpp"

namespace tessera::ops {
namespace {

void infer_depth_to_space(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  expect_nchw4(ctx);
  const int64_t b = attr_blocksize(ctx);
  const std::string mode = ctx.opset >= 11 ? attr_string(ctx, "mode", "DCR") : "DCR";
  if (mode != "DCR" && mode != "CRD") {
    ctx.fail("attribute 'mode' = '" + mode + "' is not one of DCR, CRD");
  }
  const Shape& x = ctx.input(0).shape;
  const int64_t block = checked_mul(ctx, b, b, "attribute 'blocksize' squared");
  if (x[1] % block != 0) {
    ctx.fail("attribute 'blocksize' = " + std::to_string(b) + ": its square " +
             std::to_string(block) + " does not divide the " + std::to_string(x[1]) +
             " channels of input 0");
  }
  ctx.outputs.at(0) = {ctx.input(0).dtype,
                       {x[0], x[1] / block, checked_mul(ctx, x[2], b, "output height"),
                        checked_mul(ctx, x[3], b, "output width")}};
}

void compute_depth_to_space(ComputeContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const Shape& x = xt.shape();
  const int64_t b = ctx.node.attrs.get_int("blocksize");
  const bool crd = ctx.opset >= 11 && ctx.node.attrs.get_string("mode", "DCR") == "CRD";
  const int64_t c_out = x[1] / (b * b);
  gather_elements(xt, ctx.outputs[0], [&](const std::vector<int64_t>& o) {
    const int64_t i = o[2] % b, j = o[3] % b;
    const int64_t c = crd ? o[1] * b * b + i * b + j : (i * b + j) * c_out + o[1];
    return ((o[0] * x[1] + c) * x[2] + o[2] / b) * x[3] + o[3] / b;
  });
}

}  // namespace

TESSERA_REGISTER_OP("DepthToSpace", infer_depth_to_space, compute_depth_to_space);

}  // namespace tessera::ops
