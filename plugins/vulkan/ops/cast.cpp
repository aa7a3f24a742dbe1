// Cast from float32 to float32: the same bytes, so the output shares the input's buffer.
#include "ops/op.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  if (node.attr_int("to", 0) != TSR_DTYPE_FLOAT32) return "casts other than to float32";
  return float_only(node);
}

void lower(Lowering& lowering, const NodeView& node) {
  lowering.alias(node.output_index(0), node.input_index(0));
}

}  // namespace

TESSERA_VULKAN_OP(Cast, check, lower);

}  // namespace tessera::vulkan
