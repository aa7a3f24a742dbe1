// Less: a < b of float32, int64 or int32 with broadcasting,
// a bool output (shaders/compare.comp via ops/typed.cpp).
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  return check_compare(node, CompareOp::kLess);
}

void lower(Lowering& lowering, const NodeView& node) {
  lower_compare(lowering, node, CompareOp::kLess);
}

}  // namespace

TESSERA_VULKAN_OP(Less, check, lower);

}  // namespace tessera::vulkan
