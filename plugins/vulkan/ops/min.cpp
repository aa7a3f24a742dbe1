// Min: min(a, b) (two inputs, or any number of float32 ones: ops/elementwise.cpp lower_variadic)
// with broadcasting (shaders/binary.comp).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

std::string check(const NodeView& node) {
  // Two inputs: float or integer (ops/typed.cpp); otherwise any number of float32 inputs.
  if (node.num_inputs() == 2) return check_binary(node);
  return check_variadic(node);
}

void lower(Lowering& lowering, const NodeView& node) {
  if (node.num_inputs() == 2) {
    lower_binary(lowering, node, BinaryOp::kMin);
  } else {
    lower_variadic(lowering, node, BinaryOp::kMin);
  }
}

}  // namespace

TESSERA_VULKAN_OP(Min, check, lower);

}  // namespace tessera::vulkan
