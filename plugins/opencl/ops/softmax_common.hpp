// Softmax and LogSoftmax share their checks and kernels (kernels/common/softmax.cl): one
// work-item per row or column, max-subtracted.
#pragma once

#include <string>

#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {

// A float32 input whose softmax axis (opset-dependent, as ONNX defines it) the kernels walk.
std::string check_softmax(const NodeView& node, const Device& device);
// log: LogSoftmax (x - max - log(sum exp)) instead of Softmax.
void lower_softmax(Lowering& lw, const NodeView& node, int32_t index, bool log);

}  // namespace tessera::opencl
