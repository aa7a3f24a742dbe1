// AveragePool on CLML's pooling op: padding counted in the divisor or not (count_include_pad).
#include "ops/op.hpp"

namespace tessera::clml {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_pool(lw, node, index,
             node.attr_int("count_include_pad", 0) != 0
                 ? CL_POOLING_MODE_AVERAGE_INCLUDE_PADDING_QCOM
                 : CL_POOLING_MODE_AVERAGE_EXCLUDE_PADDING_QCOM);
}

}  // namespace
TESSERA_CLML_OP("AveragePool", check_pool, lower);
}  // namespace tessera::clml
