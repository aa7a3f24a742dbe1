// Softmax over one axis (shaders/softmax.comp).
#include "ops/softmax.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_softmax(lowering, node, false);
}

}  // namespace

TESSERA_VULKAN_OP(Softmax, check_softmax, lower);

}  // namespace tessera::vulkan
