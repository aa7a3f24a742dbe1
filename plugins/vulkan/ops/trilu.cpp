// Trilu: the upper or lower triangle of the matrices of the last two axes, any dtype kept on the
// device (shaders/trilu.comp; causal masks are bool or int64). k must be a constant: it is a
// specialization constant of the shader.
#include <algorithm>

#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  const std::string why = check_movable(node);
  if (!why.empty()) return why;
  if (node.input(0)->rank < 2) return "needs rank >= 2";
  if (node.num_inputs() >= 2 && node.input(1) != nullptr) {
    const tsr_tensor& k = *node.input(1);
    if (k.data == nullptr) return "k is not a constant";
    if (plugin::tensor_numel(k) != 1) return "k is not a scalar";
    if (k.dtype != TSR_DTYPE_INT64 && k.dtype != TSR_DTYPE_INT32) return "k is not an integer";
  }
  return "";
}

void lower(Lowering& lowering, const NodeView& node) {
  const tsr_tensor& y = *node.output(0);
  // A k beyond the matrix keeps all or nothing, as does any k past +-(rows + cols): clamped so it
  // fits the int constant.
  const int64_t bound = y.dims[y.rank - 2] + y.dims[y.rank - 1];
  const int64_t k = std::max(-bound, std::min(bound, constant_ints(node, 1, {0})[0]));
  // Element bytes as stored: a float32 of a half region is 2.
  const bool half = lowering.type_code(y) == static_cast<int32_t>(TypeCode::kF16);
  const int64_t count = plugin::tensor_numel(y);
  lowering.dispatch(
      node,
      linear_kernel("trilu", count, 64,
                    {narrow(count, node, "element count"),
                     narrow(y.dims[y.rank - 2], node, "rows"),
                     narrow(y.dims[y.rank - 1], node, "columns"), narrow(k, node, "k"),
                     node.attr_int("upper", 1) != 0 ? 1 : 0,
                     half ? 2 : static_cast<int32_t>(element_bytes(y.dtype))}),
      {&lowering.buffer(node.input_index(0))}, {&lowering.buffer(node.output_index(0))});
}

}  // namespace

TESSERA_VULKAN_OP(Trilu, check, lower);

}  // namespace tessera::vulkan
