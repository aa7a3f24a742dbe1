// TopK: the k largest (or smallest) float32 elements along an axis, as values and int64
// indices (shaders/top_k.comp: each element ranks itself in its column, so no sort is needed).
// k must be a constant: it sizes the outputs and is a specialization constant of the shader.
#include "ops/elementwise.hpp"
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

// Each invocation compares itself with its whole column: an axis of 4096 is 4096 loads per
// element already; longer ones are left to the host rather than stalling the queue.
constexpr int64_t kMaxAxis = 4096;

int64_t axis_of(const NodeView& node) {
  const tsr_tensor& x = *node.input(0);
  int64_t axis = node.attr_int("axis", -1);
  return axis < 0 ? axis + x.rank : axis;
}

// k from input 1 (opset 10+) or the attribute (opset 1); -1 when it is not a constant.
int64_t k_of(const NodeView& node) {
  if (node.num_inputs() < 2) return node.attr_int("k", -1);
  const tsr_tensor* k = node.input(1);
  if (k == nullptr || k->data == nullptr || plugin::tensor_numel(*k) != 1) return -1;
  if (k->dtype != TSR_DTYPE_INT64 && k->dtype != TSR_DTYPE_INT32) return -1;
  return constant_ints(node, 1, {})[0];
}

std::string check(const NodeView& node) {
  const std::string why = check_values(node);
  if (!why.empty()) return why;
  const tsr_tensor* x = node.input(0);
  if (x == nullptr || x->rank < 1) return "needs an input of rank >= 1";
  if (node.num_outputs() != 2 || node.output(0) == nullptr || node.output(1) == nullptr) {
    return "needs both outputs";
  }
  if (x->dtype != TSR_DTYPE_FLOAT32 || node.output(0)->dtype != TSR_DTYPE_FLOAT32) {
    return "values are not float32";
  }
  if (node.output(1)->dtype != TSR_DTYPE_INT64) return "indices are not int64";
  const int64_t axis = axis_of(node);
  if (axis < 0 || axis >= x->rank) return "axis out of range";
  const int64_t k = k_of(node);
  if (k < 1) return "k is not a positive constant";
  if (k > x->dims[axis]) return "k above the axis length";
  if (x->dims[axis] > kMaxAxis) return "an axis longer than 4096 (each element scans it)";
  return "";
}

void lower(Lowering& lowering, const NodeView& node) {
  const tsr_tensor& x = *node.input(0);
  const int64_t axis = axis_of(node);
  int64_t outer = 1, inner = 1;
  for (int32_t i = 0; i < x.rank; ++i) {
    if (i < axis) outer *= x.dims[i];
    if (i > axis) inner *= x.dims[i];
  }
  Kernel k = linear_kernel(
      "top_k", plugin::tensor_numel(x), 64,
      {narrow(outer, node, "outer size"), narrow(x.dims[axis], node, "axis size"),
       narrow(inner, node, "inner size"), narrow(k_of(node), node, "k"),
       node.attr_int("largest", 1) != 0 ? 1 : 0, lowering.type_code(x),
       lowering.type_code(*node.output(0))});
  lowering.dispatch(node, k, {&lowering.buffer(node.input_index(0))},
                    {&lowering.buffer(node.output_index(0)),
                     &lowering.buffer(node.output_index(1))});
}

}  // namespace

TESSERA_VULKAN_OP(TopK, check, lower);

}  // namespace tessera::vulkan
