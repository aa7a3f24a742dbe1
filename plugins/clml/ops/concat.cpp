// Concat on CLML's concat op along one axis of the 4-D (n, c, h, w) view.
#include "ops/op.hpp"

namespace tessera::clml {
namespace {

std::string check(const NodeView& node, const Device& device) {
  if (const std::string r =
          needs(reinterpret_cast<const void*>(device.api->create_concat), "clCreateMLOpConcatQCOM");
      !r.empty()) {
    return r;
  }
  std::string r = check_io(node);
  if (!r.empty()) return r;
  const int64_t rank = node.output(0).rank;
  int64_t axis = node.attr_int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return "axis out of range";
  if (node.num_inputs() < 1) return "no inputs";
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) return "an input is missing";
    if (node.input(i).rank != rank) return "inputs of different ranks";
  }
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const int64_t rank = node.output(0).rank;
  int64_t axis = node.attr_int("axis", 0);
  if (axis < 0) axis += rank;
  std::vector<cl_ml_tensor_qcom> inputs;
  for (int32_t i = 0; i < node.num_inputs(); ++i) inputs.push_back(lw.input(node.input_index(i)));
  cl_ml_tensor_qcom out = lw.output(node.output_index(0));
  cl_ml_op_concat_desc_qcom desc{static_cast<cl_uint>(axis), static_cast<cl_uint>(inputs.size()),
                                 lw.mode()};
  cl_ml_op_qcom op = nullptr;
  const cl_int err = lw.api().create_concat(lw.context(), nullptr, &desc, inputs.data(), out, &op,
                                            lw.tuning_cache());
  lw.add_op(
      index, err, op, "clCreateMLOpConcatQCOM",
      json_attr("axis", axis) + ", " + json_attr("inputs", static_cast<int64_t>(inputs.size())));
}

}  // namespace
TESSERA_CLML_OP("Concat", check, lower);
}  // namespace tessera::clml
