// Dropout: the same bytes under another shape; the output shares the input's buffer.
#include "ops/op.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  if (node.num_outputs() > 1 && node.output(1) != nullptr) return "the mask output";
  return float_only(node);
}

void lower(Lowering& lowering, const NodeView& node) {
  lowering.alias(node.output_index(0), node.input_index(0));
}

}  // namespace

TESSERA_VULKAN_OP(Dropout, check, lower);

}  // namespace tessera::vulkan
