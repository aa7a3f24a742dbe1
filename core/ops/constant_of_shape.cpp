// ConstantOfShape: a tensor of the shape given by the constant 1-D int64 input, every element
// equal to the one-element 'value' attribute (default float32 0). Shape [] gives a scalar.
#include <cstring>

#include "op.hpp"

namespace tessera::ops {
namespace {

Tensor fill_value(const Node& node, const std::string& where) {
  if (!node.attrs.has("value")) return Tensor(DType::kFloat32, {});
  const Tensor& value = node.attrs.get_tensor("value");
  if (value.numel() != 1) {
    throw Error(where + ": attribute 'value' must hold exactly one element, got shape " +
                shape_str(value.shape()));
  }
  return value;
}

void infer_constant_of_shape(InferContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DType::kInt64});
  const Tensor& shape = ctx.constant_input(0);
  if (shape.rank() != 1) ctx.fail("input 'input' must be 1-D, got " + shape_str(shape.shape()));
  const Shape out = shape.to_int64_vector();
  for (int64_t d : out) {
    if (d < 0) ctx.fail("input 'input' " + shape_str(out) + " has a negative dim");
  }
  ctx.outputs[0] = {fill_value(ctx.node, ctx.where).dtype(), out};
}

void compute_constant_of_shape(ComputeContext& ctx) {
  const Tensor value = fill_value(ctx.node, "node '" + ctx.node.name + "' (ConstantOfShape)");
  Tensor& y = ctx.outputs[0];
  const size_t size = dtype_size(y.dtype());
  auto* dst = static_cast<std::byte*>(y.raw());
  for (int64_t i = 0; i < y.numel(); ++i) {
    std::memcpy(dst + static_cast<size_t>(i) * size, value.raw(), size);
  }
}

}  // namespace

TESSERA_REGISTER_OP("ConstantOfShape", infer_constant_of_shape, compute_constant_of_shape);

}  // namespace tessera::ops
