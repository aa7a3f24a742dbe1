// Squeeze: the same bytes under another shape; the output shares the input's buffer
// (any dtype kept on the device).
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lowering.alias(node.output_index(0), node.input_index(0));
}

}  // namespace

TESSERA_VULKAN_OP(Squeeze, check_movable, lower);

}  // namespace tessera::vulkan
