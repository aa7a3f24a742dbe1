// Shared lowering of InstanceNormalization and GroupNormalization (shaders/layer_norm.comp with
// scale and bias read per channel or per group).
#pragma once

#include "ops/op.hpp"

namespace tessera::vulkan {

// "" when `node` (X, scale, bias on (N, C, ...)) is float32 with `params` scale and bias values
// each, else why not.
std::string check_norm(const NodeView& node, int64_t params);
// Normalises `groups` row groups per sample of input 0 (N, C, ...), each over C / groups channels;
// scale and bias hold one value per run of `period` elements, `count` of them in turn.
void lower_norm(Lowering& lowering, const NodeView& node, int64_t groups, int64_t period,
                int64_t count);

}  // namespace tessera::vulkan
