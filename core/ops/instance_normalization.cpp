// InstanceNormalization (ONNX opsets 6-22) on float32 [N, C, spatial...]: each (n, c) plane is
// normalized over its spatial positions, then y = normalized * scale[c] + B[c]. This is group
// normalization with one channel per group.
#include <string>

#include "op.hpp"
#include "util/normalization.hpp"
#include "util/pooling.hpp"

namespace tessera::ops {
namespace {

void infer_instance_normalization(InferContext& ctx) {
  ctx.expect_inputs(3, 3);
  ctx.expect_dtype(0, {DType::kFloat32});
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 3) {
    ctx.fail("input 0 ('input') has shape " + shape_str(x) +
             "; expected rank >= 3 (N, C, then one or more spatial dims)");
  }
  attr_epsilon(ctx);
  expect_vector_input(ctx, 1, x[1], "scale", "channel");
  expect_vector_input(ctx, 2, x[1], "B", "channel");
  ctx.outputs.at(0) = {DType::kFloat32, x};
}

void compute_instance_normalization(ComputeContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const int64_t batch = xt.shape()[0], channels = xt.shape()[1];
  const int64_t spatial = batch * channels == 0 ? 0 : xt.numel() / (batch * channels);
  group_normalize(xt.data<float>(), ctx.outputs[0].data<float>(), batch, channels, spatial,
                  channels, ctx.node.attrs.get_float("epsilon", 1e-5f), ctx.input(1).data<float>(),
                  ctx.input(2).data<float>());
}

}  // namespace

TESSERA_REGISTER_OP("InstanceNormalization", infer_instance_normalization,
                    compute_instance_normalization);

}  // namespace tessera::ops
