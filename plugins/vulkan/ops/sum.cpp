// Sum of any number (>= 1) of broadcasting float32 inputs (ops/elementwise.cpp lower_variadic:
// binary.comp steps folding into the output).
#include "ops/elementwise.hpp"

namespace tessera::vulkan {
namespace {

void lower(Lowering& lowering, const NodeView& node) {
  lower_variadic(lowering, node, BinaryOp::kAdd);
}

}  // namespace

TESSERA_VULKAN_OP(Sum, check_variadic, lower);

}  // namespace tessera::vulkan
