// Equal: a == b of float32, int64, int32 or bool with broadcasting,
// a bool output (shaders/compare.comp via ops/typed.cpp).
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  return check_compare(node, CompareOp::kEqual);
}

void lower(Lowering& lowering, const NodeView& node) {
  lower_compare(lowering, node, CompareOp::kEqual);
}

}  // namespace

TESSERA_VULKAN_OP(Equal, check, lower);

}  // namespace tessera::vulkan
