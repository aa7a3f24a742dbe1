// Shared lowering of Softmax and LogSoftmax (shaders/softmax.comp).
#pragma once

#include "ops/op.hpp"

namespace tessera::vulkan {

std::string check_softmax(const NodeView& node);
void lower_softmax(Lowering& lowering, const NodeView& node, bool log);

}  // namespace tessera::vulkan
