// IsNaN and IsInf (ops/is_nan.cpp, ops/is_inf.cpp) share shaders/float_class.comp.
#pragma once
#include <string>
#include "ops/op.hpp"

namespace tessera::vulkan {

// "" when input 0 is float32 and output 0 bool, else why not.
std::string check_float_class(const NodeView& node);
// mode 0: IsNaN; mode 1: IsInf of the signs `pos` and `neg` select.
void lower_float_class(Lowering& lowering, const NodeView& node, int32_t mode, bool pos, bool neg);

}  // namespace tessera::vulkan
