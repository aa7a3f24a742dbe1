// Shared lowering of MaxPool and AveragePool (shaders/pool2d.comp).
#pragma once

#include "ops/op.hpp"

namespace tessera::vulkan {

std::string check_pool(const NodeView& node);
void lower_pool(Lowering& lowering, const NodeView& node, bool is_max);

}  // namespace tessera::vulkan
