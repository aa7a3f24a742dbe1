// Tanh on CLML's activation op: tanh(x). After a Conv it is fused into the convolution where
// CLML's fused op can apply it (conv.cpp).
#include "ops/op.hpp"

namespace tessera::clml {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_activation(lw, node, index, CL_ACTIVATION_TANH);
}

}  // namespace
TESSERA_CLML_OP("Tanh", check_activation, lower);
}  // namespace tessera::clml
