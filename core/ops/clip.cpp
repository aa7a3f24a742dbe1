// Clip: y = min(max(x, min), max). Before opset 11 min/max are float attributes; from opset 11
// they are optional scalar inputs of x's dtype (integer types from opset 12).
#include <algorithm>
#include <limits>

#include "op.hpp"
#include "util/axes.hpp"
#include "util/elementwise.hpp"

namespace tessera::ops {
namespace {

void infer_clip(InferContext& ctx) {
  if (ctx.opset < 11) {
    ctx.expect_inputs(1, 1);
    ctx.expect_dtype(0, {DType::kFloat32, DType::kFloat16});
    ctx.node.attrs.get_float("min", 0.0f);
    ctx.node.attrs.get_float("max", 0.0f);
  } else {
    ctx.expect_inputs(1, 3);
    ctx.expect_dtype(0, {DType::kFloat32, DType::kFloat16, DType::kInt32, DType::kInt64,
                         DType::kInt8, DType::kUInt8});
    for (size_t i = 1; i < 3; ++i) {
      if (!ctx.has_input(i)) continue;
      const InputInfo& bound = ctx.input(i);
      if (bound.dtype != ctx.input(0).dtype) {
        ctx.fail(std::string("input ") + (i == 1 ? "'min'" : "'max'") + " has dtype " +
                 dtype_name(bound.dtype) + " but input 'input' has " +
                 dtype_name(ctx.input(0).dtype) + "; they must match");
      }
      if (shape_numel(bound.shape) != 1) {
        ctx.fail(std::string("input ") + (i == 1 ? "'min'" : "'max'") +
                 " must be a scalar, got shape " + shape_str(bound.shape));
      }
    }
  }
  ctx.outputs[0] = {ctx.input(0).dtype, ctx.input(0).shape};
}

// Applies the bounds with T's own arithmetic (integers are never routed through float).
template <typename T>
void clip_typed(ComputeContext& ctx) {
  T lo = std::numeric_limits<T>::lowest();
  T hi = std::numeric_limits<T>::max();
  if (ctx.has_input(1)) lo = ctx.input(1).data<T>()[0];
  if (ctx.has_input(2)) hi = ctx.input(2).data<T>()[0];
  const Tensor& x = ctx.input(0);
  const T* in = x.data<T>();
  T* out = ctx.outputs[0].data<T>();
  // min(max(x, lo), hi): with lo > hi every element becomes hi, as numpy.clip does.
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = std::min(std::max(in[i], lo), hi);
}

void compute_clip(ComputeContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (ctx.opset < 11 || x.dtype() == DType::kFloat16) {
    float lo = std::numeric_limits<float>::lowest();
    float hi = std::numeric_limits<float>::max();
    if (ctx.opset < 11) {
      lo = ctx.node.attrs.get_float("min", lo);
      hi = ctx.node.attrs.get_float("max", hi);
    } else {
      if (ctx.has_input(1)) lo = half_to_float(ctx.input(1).data<uint16_t>()[0]);
      if (ctx.has_input(2)) hi = half_to_float(ctx.input(2).data<uint16_t>()[0]);
    }
    compute_float_activation(ctx, [=](float v) { return std::min(std::max(v, lo), hi); });
    return;
  }
  switch (x.dtype()) {
    case DType::kFloat32:
      return clip_typed<float>(ctx);
    case DType::kInt32:
      return clip_typed<int32_t>(ctx);
    case DType::kInt64:
      return clip_typed<int64_t>(ctx);
    case DType::kInt8:
      return clip_typed<int8_t>(ctx);
    case DType::kUInt8:
      return clip_typed<uint8_t>(ctx);
    default:
      throw Error(node_where(ctx.node) + ": no Clip kernel for " + dtype_name(x.dtype()));
  }
}

}  // namespace

TESSERA_REGISTER_OP("Clip", infer_clip, compute_clip);

}  // namespace tessera::ops
