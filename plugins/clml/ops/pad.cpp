// Pad with zeros (mode "constant", value 0) of a rank-4 tensor on CLML's pad op. The pads
// travel as (before, after) per NCHW dim.
#include "ops/op.hpp"

namespace tessera::clml {
namespace {

// The ONNX pads (x1_begin, x2_begin, ..., x1_end, ...), or empty with *why set.
std::vector<int64_t> pads_of(const NodeView& node, std::string* why) {
  if (node.opset() < 11) return node.attr_ints("pads", {});
  if (!node.has_input(1) || !node.input(1).data || node.input(1).dtype != TSR_DTYPE_INT64) {
    *why = "pads must be a constant int64 input";
    return {};
  }
  const int64_t* p = static_cast<const int64_t*>(node.input(1).data);
  return std::vector<int64_t>(p, p + plugin::tensor_numel(node.input(1)));
}

std::string check(const NodeView& node, const Device& device) {
  if (const std::string r =
          needs(reinterpret_cast<const void*>(device.api->create_pad), "clCreateMLOpPadQCOM");
      !r.empty()) {
    return r;
  }
  const std::string r = check_data_io(node);
  if (!r.empty()) return r;
  if (node.input(0).rank != 4) return "only rank-4 tensors";
  if (node.attr_string("mode", "constant") != "constant") return "only mode 'constant'";
  if (node.num_inputs() > 3 && node.has_input(3)) return "the axes input is not supported";
  if (node.num_inputs() > 2 && node.has_input(2)) {
    const tsr_tensor& v = node.input(2);
    if (!v.data || v.dtype != TSR_DTYPE_FLOAT32 || plugin::tensor_numel(v) != 1 ||
        static_cast<const float*>(v.data)[0] != 0.0f) {
      return "only a constant pad value of 0";
    }
  }
  if (node.opset() < 11 && node.attr_float("value", 0.0f) != 0.0f) return "only pad value 0";
  std::string why;
  const std::vector<int64_t> pads = pads_of(node, &why);
  if (!why.empty()) return why;
  if (pads.size() != 8) return "pads must have 8 values";
  for (int64_t p : pads) {
    if (p < 0) return "negative pads (cropping) are not supported";
  }
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  std::string why;
  const std::vector<int64_t> pads = pads_of(node, &why);
  cl_ml_op_pad_desc_qcom desc{};
  desc.pad_mode = CL_PAD_MODE_CONSTANT_QCOM;
  desc.paddings_shape[0] = 4;
  desc.paddings_shape[1] = 2;
  for (int d = 0; d < 4; ++d) {
    desc.paddings[2 * d] = static_cast<cl_uint>(pads[d]);
    desc.paddings[2 * d + 1] = static_cast<cl_uint>(pads[d + 4]);
  }
  desc.arithmetic_mode = lw.mode();
  cl_ml_tensor_qcom in = lw.input(node.input_index(0));
  cl_ml_tensor_qcom out = lw.output(node.output_index(0));
  cl_ml_op_qcom op = nullptr;
  const cl_int err =
      lw.api().create_pad(lw.context(), nullptr, &desc, in, out, &op, lw.tuning_cache());
  lw.add_op(index, err, op, "clCreateMLOpPadQCOM", json_attr("pads", pads));
}

}  // namespace
TESSERA_CLML_OP("Pad", check, lower);
}  // namespace tessera::clml
