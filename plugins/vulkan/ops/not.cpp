// Not: !a of bools, a bool output (shaders/compare.comp via ops/typed.cpp).
#include "ops/typed.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  return check_compare(node, CompareOp::kNot);
}

void lower(Lowering& lowering, const NodeView& node) {
  lower_compare(lowering, node, CompareOp::kNot);
}

}  // namespace

TESSERA_VULKAN_OP(Not, check, lower);

}  // namespace tessera::vulkan
