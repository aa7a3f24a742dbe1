// ReduceMean over both spatial axes of a rank-4 tensor (how torch's dynamo exporter writes
// AdaptiveAvgPool2d(1) and x.mean((2, 3))) on CLML's global average pooling. With keepdims = 0
// the [N, C] result is the same (n, c, 1, 1) CLML tensor.
#include "ops/op.hpp"

namespace tessera::clml {
namespace {

std::string check(const NodeView& node, const Device& device) {
  if (const std::string r = needs(reinterpret_cast<const void*>(device.api->create_pooling),
                                  "clCreateMLOpPoolingForwardQCOM");
      !r.empty()) {
    return r;
  }
  const std::string r = check_data_io(node);
  if (!r.empty()) return r;
  if (node.input(0).rank != 4) return "only rank-4 inputs";
  return opencl::support::check_mean_over_spatial_axes(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_pool(lw, node, index, CL_POOLING_MODE_GLOBAL_AVERAGE_QCOM);
}

}  // namespace
TESSERA_CLML_OP("ReduceMean", check, lower);
}  // namespace tessera::clml
