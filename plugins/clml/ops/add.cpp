// Add on CLML's binary op, for two inputs of one shape (a broadcast falls back to the next
// target with the reason).
#include "ops/op.hpp"

namespace tessera::clml {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_binary(lw, node, index, CL_TENSOR_OP_ADD_QCOM);
}

}  // namespace
TESSERA_CLML_OP("Add", check_binary, lower);
}  // namespace tessera::clml
