// Slice: constant starts, ends, axes and steps (inputs from opset 10, the
// attributes before), any sign of step, rank <= 6: the shared strided copy on NCHW. Starts are
// clamped as ONNX says; the output shape is core's (shape inference).
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

std::string check(const NodeView& node, const Device&) {
  return support::check_slice(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  lower_strided_copy(lw, node, index, support::slice_copy(node));
}

}  // namespace
TESSERA_OPENCL_OP("Slice", check, lower);
}  // namespace tessera::opencl
