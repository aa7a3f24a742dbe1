// GlobalAveragePool on CLML's pooling op: the mean over each channel plane (rank-4 NCHW).
#include "ops/op.hpp"

namespace tessera::clml {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_pool(lw, node, index, CL_POOLING_MODE_GLOBAL_AVERAGE_QCOM);
}

}  // namespace
TESSERA_CLML_OP("GlobalAveragePool", check_pool, lower);
}  // namespace tessera::clml
