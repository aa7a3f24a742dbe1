// GroupNormalization and InstanceNormalization share one kernel (kernels/norm.cl: a work-item
// normalises a contiguous group of channels), described here once.
#pragma once

#include <vector>

#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {

// "" when X (rank >= 3 as exported; rank 2 accepted) is float32, `scale` and `bias` (inputs 1
// and 2) are constants of `params` values each; else the reason.
std::string check_group_norm(const NodeView& node, const Device& device, int64_t params);

// The configs worth measuring for `groups` groups of input 0: a work-group per group on GPUs
// first, else a work-item per group first.
std::vector<Config> group_norm_options(const NodeView& node, const Device& device,
                                       int64_t groups);

// Normalises groups of `per_group` channels of input 0 with per-channel `scale` and `bias`.
void lower_group_norm(Lowering& lw, const NodeView& node, int32_t index, int64_t groups,
                      const std::vector<float>& scale, const std::vector<float>& bias);

}  // namespace tessera::opencl
