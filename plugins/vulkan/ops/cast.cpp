// Cast between the dtypes kept on the device (float32, int64, int32, int8, uint8, bool) with
// core's semantics (shaders/cast.comp); a cast to the input's own dtype is the same bytes, so
// its output shares the input's buffer.
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  const std::string why = check_values(node);
  if (!why.empty()) return why;
  if (node.input(0) == nullptr || node.output(0) == nullptr) return "needs input 0 and output 0";
  if (node.attr_int("to", 0) != node.output(0)->dtype) return "attribute 'to' is not output 0's";
  return "";
}

void lower(Lowering& lowering, const NodeView& node) {
  const tsr_tensor& x = *node.input(0);
  const tsr_tensor& y = *node.output(0);
  if (x.dtype == y.dtype) {
    lowering.alias(node.output_index(0), node.input_index(0));
    return;
  }
  require_int64(lowering, node);
  const int64_t count = plugin::tensor_numel(y);
  lowering.dispatch(
      node,
      linear_kernel(
          "cast", count, 64,
          {narrow(count, node, "element count"), lowering.type_code(x), lowering.type_code(y)}),
      {&lowering.buffer(node.input_index(0))}, {&lowering.buffer(node.output_index(0))});
}

}  // namespace

TESSERA_VULKAN_OP(Cast, check, lower);

}  // namespace tessera::vulkan
