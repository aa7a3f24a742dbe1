// MaxPool on CLML's pooling op: the maximum over each window (rank-4 NCHW).
#include "ops/op.hpp"

namespace tessera::clml {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_pool(lw, node, index, CL_POOLING_MODE_MAX_QCOM);
}

}  // namespace
TESSERA_CLML_OP("MaxPool", check_pool, lower);
}  // namespace tessera::clml
