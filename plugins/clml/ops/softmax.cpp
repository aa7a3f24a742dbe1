// Softmax over the channel axis (axis 1 of a rank-2 or rank-4 tensor) on CLML's softmax op in
// channel mode.
#include "ops/op.hpp"

namespace tessera::clml {
namespace {

int64_t axis_of(const NodeView& node) {
  const int64_t rank = node.input(0).rank;
  int64_t axis = node.attr_int("axis", node.opset() >= 13 ? -1 : 1);
  return axis < 0 ? axis + rank : axis;
}

std::string check(const NodeView& node, const Device& device) {
  if (const std::string r = needs(reinterpret_cast<const void*>(device.api->create_softmax),
                                  "clCreateMLOpSoftmaxQCOM");
      !r.empty()) {
    return r;
  }
  std::string r = check_io(node);
  if (!r.empty()) return r;
  const int64_t rank = node.input(0).rank;
  const int64_t axis = axis_of(node);
  if (axis != 1 || (rank != 2 && rank != 4)) {
    return "only the channel axis (axis 1 of a rank-2 or rank-4 tensor) is supported";
  }
  // Before opset 13, axis 1 of a rank-4 input means the flattened C*H*W.
  if (node.opset() < 13 && rank == 4) return "opset < 13 Softmax of a rank-4 input";
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  cl_ml_op_softmax_desc_qcom desc{CL_SOFTMAX_ALGORITHM_ACCURATE_QCOM, CL_SOFTMAX_MODE_CHANNEL_QCOM,
                                  lw.mode()};
  cl_ml_tensor_qcom in = lw.input(node.input_index(0));
  cl_ml_tensor_qcom out = lw.output(node.output_index(0));
  cl_ml_op_qcom op = nullptr;
  const cl_int err =
      lw.api().create_softmax(lw.context(), nullptr, &desc, in, out, &op, lw.tuning_cache());
  lw.add_op(index, err, op, "clCreateMLOpSoftmaxQCOM",
            json_attr("mode", static_cast<int64_t>(CL_SOFTMAX_MODE_CHANNEL_QCOM)));
}

}  // namespace
TESSERA_CLML_OP("Softmax", check, lower);
}  // namespace tessera::clml
