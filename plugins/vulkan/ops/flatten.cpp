// Flatten: the same bytes under another shape; the output shares the input's buffer.
#include "ops/op.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lowering.alias(node.output_index(0), node.input_index(0));
}

}  // namespace

TESSERA_VULKAN_OP(Flatten, float_only, lower);

}  // namespace tessera::vulkan
