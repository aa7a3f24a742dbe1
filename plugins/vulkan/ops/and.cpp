// And: a && b of bools with broadcasting, a bool output (shaders/compare.comp via ops/typed.cpp).
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  return check_compare(node, CompareOp::kAnd);
}

void lower(Lowering& lowering, const NodeView& node) {
  lower_compare(lowering, node, CompareOp::kAnd);
}

}  // namespace

TESSERA_VULKAN_OP(And, check, lower);

}  // namespace tessera::vulkan
