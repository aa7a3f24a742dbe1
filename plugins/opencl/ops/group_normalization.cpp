// GroupNormalization: num_groups groups of consecutive channels, each normalised by its own mean
// and variance, then scaled and shifted per channel (opset 21) or per group (opset 18, whose
// scale and bias hold one value per group); group_norm_common.hpp's kernel.
#include "group_norm_common.hpp"

namespace tessera::opencl {
namespace {

bool per_group_params(const NodeView& node) {
  return node.opset() < 21;
}

std::string check(const NodeView& node, const Device& device) {
  if (!node.has_input(0) || node.input(0).rank < 2) return "input rank below 2";
  const int64_t groups = node.attr_int("num_groups", 0);
  const int64_t channels = node.input(0).dims[1];
  if (groups <= 0 || channels % groups != 0) {
    return "num_groups = " + std::to_string(groups) + " does not divide " +
           std::to_string(channels) + " channels";
  }
  return check_group_norm(node, device, per_group_params(node) ? groups : channels);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const int64_t groups = node.attr_int("num_groups", 0);
  const int64_t channels = node.input(0).dims[1];
  const float* s = constant_floats(node, 1);
  const float* b = constant_floats(node, 2);
  std::vector<float> scale(static_cast<size_t>(channels)), bias(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    const int64_t at = per_group_params(node) ? c / (channels / groups) : c;
    scale[static_cast<size_t>(c)] = s[at];
    bias[static_cast<size_t>(c)] = b[at];
  }
  lower_group_norm(lw, node, index, groups, scale, bias);
}

std::vector<Config> options(const NodeView& node, const Device& device) {
  return group_norm_options(node, device, node.attr_int("num_groups", 1));
}

}  // namespace
TESSERA_OPENCL_OP("GroupNormalization", check, lower);
TESSERA_OPENCL_TUNABLE("GroupNormalization", options);
}  // namespace tessera::opencl
