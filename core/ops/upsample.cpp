// Upsample (ONNX opsets 7-9; deprecated by Resize in opset 10) on float32, modes nearest and
// linear (N-linear). Opset 7 takes the scales as a float attribute, opset 9 as input 1. Every
// scale must be >= 1. Coordinates are asymmetric (x_in = x_out / scale) and nearest takes the
// floor, as ONNX Runtime's Upsample does; the kernel is Resize's (util/resize.hpp).
#include <cmath>
#include <string>
#include <vector>

#include "op.hpp"
#include "util/pooling.hpp"
#include "util/resize.hpp"

namespace tessera::ops {
namespace {

ResizePlan upsample_plan(const InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  ResizePlan plan;
  plan.mode = attr_string(ctx, "mode", "nearest");
  if (plan.mode == "bilinear") plan.mode = "linear";  // opset 7's spelling in some exporters
  if (plan.mode != "nearest" && plan.mode != "linear") {
    ctx.fail("attribute 'mode' = '" + plan.mode + "' is not one of nearest, linear");
  }
  std::vector<float> scales;
  std::string what;
  if (ctx.opset >= 9) {
    what = "input 1 ('scales')";
    const Tensor& t = ctx.constant_input(1);
    if (t.dtype() != DType::kFloat32 || t.rank() != 1) {
      ctx.fail(what + " must be a 1-D float32 tensor, got " + dtype_name(t.dtype()) + " " +
               shape_str(t.shape()));
    }
    scales = t.to_float_vector();
  } else {
    what = "attribute 'scales'";
    if (!ctx.node.attrs.has("scales")) ctx.fail("required attribute 'scales' is missing");
    try {
      scales = ctx.node.attrs.get_floats("scales");
    } catch (const Error& e) {
      ctx.fail(e.what());
    }
  }
  if (scales.size() != x.size()) {
    ctx.fail(what + " has " + std::to_string(scales.size()) + " values but input 0 has rank " +
             std::to_string(x.size()) + " (one scale per dim)");
  }
  plan.scales = scales;
  plan.output = x;
  for (size_t a = 0; a < x.size(); ++a) {
    check_resize_scale(ctx, scales[a], what);
    if (scales[a] < 1.0f) {
      ctx.fail(what + " value " + std::to_string(scales[a]) + " at dim " + std::to_string(a) +
               " is below 1 (Upsample only enlarges; use Resize to shrink)");
    }
    plan.output[a] = scaled_dim(ctx, x[a], scales[a], a);
  }
  return plan;
}

void infer_upsample(InferContext& ctx) {
  ctx.expect_inputs(ctx.opset >= 9 ? 2 : 1, ctx.opset >= 9 ? 2 : 1);
  ctx.expect_dtype(0, {DType::kFloat32});
  ctx.outputs.at(0) = {DType::kFloat32, upsample_plan(ctx).output};
}

void compute_upsample(ComputeContext& ctx) {
  const InferContext ictx = context_of_constants(ctx);
  compute_resize_plan(ctx.input(0), upsample_plan(ictx), ctx.outputs[0]);
}

}  // namespace

TESSERA_REGISTER_OP("Upsample", infer_upsample, compute_upsample);

}  // namespace tessera::ops
