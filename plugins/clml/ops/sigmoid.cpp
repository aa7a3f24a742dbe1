// Sigmoid on CLML's activation op: 1 / (1 + exp(-x)). After a Conv it is fused into the convolution
// where CLML's fused op can apply it (conv.cpp).
#include "ops/op.hpp"

namespace tessera::clml {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_activation(lw, node, index, CL_ACTIVATION_SIGMOID);
}

}  // namespace
TESSERA_CLML_OP("Sigmoid", check_activation, lower);
}  // namespace tessera::clml
