// Xor: a != b of bools with broadcasting, a bool output (shaders/compare.comp via ops/typed.cpp).
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  return check_compare(node, CompareOp::kXor);
}

void lower(Lowering& lowering, const NodeView& node) {
  lower_compare(lowering, node, CompareOp::kXor);
}

}  // namespace

TESSERA_VULKAN_OP(Xor, check, lower);

}  // namespace tessera::vulkan
