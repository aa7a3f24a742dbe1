// Shared lowering of IsNaN and IsInf (ops/float_class.hpp).
#include "ops/float_class.hpp"

#include "ops/typed.hpp"

namespace tessera::vulkan {

std::string check_float_class(const NodeView& node) {
  const std::string why = check_values(node);
  if (!why.empty()) return why;
  if (node.input(0) == nullptr || node.output(0) == nullptr) return "needs input 0 and output 0";
  if (node.input(0)->dtype != TSR_DTYPE_FLOAT32) return "input 0 is not float32";
  if (node.output(0)->dtype != TSR_DTYPE_BOOL) return "output 0 is not bool";
  return "";
}

void lower_float_class(Lowering& lowering, const NodeView& node, int32_t mode, bool pos, bool neg) {
  const int64_t count = plugin::tensor_numel(*node.output(0));
  lowering.dispatch(node,
                    linear_kernel("float_class", count, 64,
                                  {narrow(count, node, "element count"),
                                   lowering.type_code(*node.input(0)), mode, pos ? 1 : 0,
                                   neg ? 1 : 0}),
                    {&lowering.buffer(node.input_index(0))},
                    {&lowering.buffer(node.output_index(0))});
}

}  // namespace tessera::vulkan
