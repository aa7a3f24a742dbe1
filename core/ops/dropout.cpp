// Dropout at inference: the output is the input and the optional mask is all true (bool from
// opset 10; before that the mask has the input's dtype, filled with 1). Training mode (input
// 'training_mode' = true, opset 12) is unsupported, being random, unless the ratio is the constant
// 0: then it drops nothing and scales by 1, the same identity (torchvision's swin_t exports its
// attention dropout that way; normalise_dropout then clears the flag for the plugins). Before
// opset 7 'is_test' = 0 nominally meant training; like other inference runtimes we treat every
// Dropout as inference.
#include <cstring>

#include "op.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

// The constant ratio (input 1 from opset 12; default 0.5); fails naming the node when it is not a
// float scalar.
float dropout_ratio(const InferContext& ctx) {
  if (!ctx.has_input(1)) return 0.5f;
  const Tensor& r = ctx.constant_input(1);
  if (r.numel() != 1 || (r.dtype() != DType::kFloat32 && r.dtype() != DType::kFloat16)) {
    ctx.fail("input 'ratio' must be a float scalar, got " + std::string(dtype_name(r.dtype())) +
             " " + shape_str(r.shape()));
  }
  return r.dtype() == DType::kFloat32 ? r.data<float>()[0] : half_to_float(r.data<uint16_t>()[0]);
}

void infer_dropout(InferContext& ctx) {
  ctx.expect_inputs(1, ctx.opset >= 12 ? 3 : 1);
  ctx.expect_dtype(0, {DType::kFloat32, DType::kFloat16});
  if (ctx.has_input(2)) {
    const Tensor& training = ctx.constant_input(2);
    if (training.numel() != 1 || training.dtype() != DType::kBool) {
      ctx.fail("input 'training_mode' must be a bool scalar, got " +
               std::string(dtype_name(training.dtype())) + " " + shape_str(training.shape()));
    }
    if (training.data<bool>()[0]) {
      const float ratio = dropout_ratio(ctx);
      if (ratio != 0.0f) {
        ctx.unsupported("input 'training_mode' is true and the ratio is " + std::to_string(ratio) +
                        "; only inference Dropout is supported (or ratio 0, which drops nothing)");
      }
    }
  }
  const InputInfo& x = ctx.input(0);
  ctx.outputs[0] = {x.dtype, x.shape};
  if (ctx.outputs.size() > 1) ctx.outputs[1] = {ctx.opset >= 10 ? DType::kBool : x.dtype, x.shape};
}

void compute_dropout(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  ctx.outputs[0] = x;
  if (ctx.outputs.size() < 2) return;
  Tensor& mask = ctx.outputs[1];
  if (mask.dtype() == DType::kBool) {
    bool* m = mask.data<bool>();
    for (int64_t i = 0; i < mask.numel(); ++i) m[i] = true;
  } else if (mask.dtype() == DType::kFloat16) {
    uint16_t* m = mask.data<uint16_t>();
    for (int64_t i = 0; i < mask.numel(); ++i) m[i] = float_to_half(1.0f);
  } else {
    float* m = mask.data<float>();
    for (int64_t i = 0; i < mask.numel(); ++i) m[i] = 1.0f;
  }
}

}  // namespace

TESSERA_REGISTER_OP("Dropout", infer_dropout, compute_dropout);

}  // namespace tessera::ops
