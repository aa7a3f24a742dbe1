// Where: cond ? x : y with broadcasting of all three operands (shaders/where.comp); x, y and the
// output of any dtype kept on the device, moved as raw elements (masked fills in attention).
#include "ops/elementwise.hpp"
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  const std::string why = check_values(node);
  if (!why.empty()) return why;
  if (node.num_inputs() != 3) return "needs three inputs";
  for (int32_t i = 0; i < 3; ++i) {
    if (node.input(i) == nullptr) return "input " + std::to_string(i) + " is absent";
  }
  if (node.input(0)->dtype != TSR_DTYPE_BOOL) return "the condition is not bool";
  const int32_t d = node.output(0)->dtype;
  if (node.input(1)->dtype != d || node.input(2)->dtype != d) return "x and y of another dtype";
  if (node.output(0)->rank > 6) return "rank above 6";
  return "";
}

void lower(Lowering& lowering, const NodeView& node) {
  const std::vector<int64_t> out_shape = shape_of(*node.output(0));
  std::vector<int32_t> c = rank6(out_shape, 1, node);
  for (int32_t i = 0; i < 3; ++i) {
    const std::vector<int32_t> s =
        rank6(broadcast_strides(shape_of(*node.input(i)), out_shape), 0, node);
    c.insert(c.end(), s.begin(), s.end());
  }
  // Element bytes as stored: a float32 of a half region is 2.
  const tsr_tensor& y = *node.output(0);
  const bool half = lowering.type_code(y) == static_cast<int32_t>(TypeCode::kF16);
  c.push_back(half ? 2 : static_cast<int32_t>(element_bytes(y.dtype)));
  const int64_t count = plugin::tensor_numel(y);
  lowering.dispatch(node, linear_kernel("where", count, 64, std::move(c)),
                    {&lowering.buffer(node.input_index(0)), &lowering.buffer(node.input_index(1)),
                     &lowering.buffer(node.input_index(2))},
                    {&lowering.buffer(node.output_index(0))});
}

}  // namespace

TESSERA_VULKAN_OP(Where, check, lower);

}  // namespace tessera::vulkan
