// InstanceNormalization (MobileViT-v2, style transfer): each (n, c) plane normalised by its own
// mean and variance, then scaled and shifted per channel; a group norm with one channel per
// group (group_norm_common.hpp), on NCHW buffers of rank >= 2.
#include "group_norm_common.hpp"

namespace tessera::opencl {
namespace {

std::string check(const NodeView& node, const Device& device) {
  if (!node.has_input(0) || node.input(0).rank < 2) return "input rank below 2";
  return check_group_norm(node, device, node.input(0).dims[1]);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const int64_t channels = node.input(0).dims[1];
  const float* s = constant_floats(node, 1);
  const float* b = constant_floats(node, 2);
  lower_group_norm(lw, node, index, channels, std::vector<float>(s, s + channels),
                   std::vector<float>(b, b + channels));
}

std::vector<Config> options(const NodeView& node, const Device& device) {
  return group_norm_options(node, device, node.input(0).dims[1]);
}

}  // namespace
TESSERA_OPENCL_OP("InstanceNormalization", check, lower);
TESSERA_OPENCL_TUNABLE("InstanceNormalization", options);
}  // namespace tessera::opencl
