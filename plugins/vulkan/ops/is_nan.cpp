// IsNaN: a bool mask of the NaNs of a float32 tensor (shaders/float_class.comp).
#include "ops/float_class.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_float_class(lowering, node, 0, false, false);
}

}  // namespace

TESSERA_VULKAN_OP(IsNaN, check_float_class, lower);

}  // namespace tessera::vulkan
