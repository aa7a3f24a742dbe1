// IsInf: a bool mask of the infinities of a float32 tensor, +inf and -inf as detect_positive and
// detect_negative select (shaders/float_class.comp).
#include "ops/float_class.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_float_class(lowering, node, 1, node.attr_int("detect_positive", 1) != 0,
                    node.attr_int("detect_negative", 1) != 0);
}

}  // namespace

TESSERA_VULKAN_OP(IsInf, check_float_class, lower);

}  // namespace tessera::vulkan
