// Constant: outputs the tensor in exactly one attribute: 'value' (a tensor), or from opset 12
// 'value_float' / 'value_floats' (float32 scalar / 1-D) and 'value_int' / 'value_ints' (int64
// scalar / 1-D). Sparse and string constants are unsupported.
#include "op.hpp"

namespace tessera::ops {
namespace {

Tensor constant_value(const Node& node, const std::string& where) {
  const Attributes& attrs = node.attrs;
  for (const char* name : {"sparse_value", "value_string", "value_strings"}) {
    if (attrs.has(name)) {
      throw UnsupportedError(where + ": attribute '" + name +
                             "' is not supported (only dense numeric constants)");
    }
  }
  int count = 0;
  for (const char* name : {"value", "value_float", "value_floats", "value_int", "value_ints"}) {
    count += attrs.has(name) ? 1 : 0;
  }
  if (count != 1) {
    throw Error(where +
                ": needs exactly one of the attributes 'value', 'value_float', "
                "'value_floats', 'value_int', 'value_ints'; found " +
                std::to_string(count));
  }
  if (attrs.has("value")) return attrs.get_tensor("value");
  if (attrs.has("value_float"))
    return Tensor::from_vector<float>({}, {attrs.get_float("value_float")});
  if (attrs.has("value_int")) return Tensor::from_vector<int64_t>({}, {attrs.get_int("value_int")});
  if (attrs.has("value_floats")) {
    const std::vector<float> v = attrs.get_floats("value_floats");
    return Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v);
  }
  const std::vector<int64_t> v = attrs.get_ints("value_ints");
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

void infer_constant(InferContext& ctx) {
  ctx.expect_inputs(0, 0);
  const Tensor value = constant_value(ctx.node, ctx.where);
  if (value.empty()) ctx.fail("attribute 'value' holds a tensor without a dtype");
  ctx.outputs[0] = {value.dtype(), value.shape()};
}

void compute_constant(ComputeContext& ctx) {
  // A deep copy: consumers may write into their inputs' buffers only if they own them.
  ctx.outputs[0] = constant_value(ctx.node, "node '" + ctx.node.name + "' (Constant)").clone();
}

}  // namespace

TESSERA_REGISTER_OP("Constant", infer_constant, compute_constant);

}  // namespace tessera::ops
