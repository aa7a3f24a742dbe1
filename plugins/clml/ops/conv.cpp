// Conv on CLML: regular and depthwise (one filter per channel) 2-D convolutions, the two forms
// TVM's CLML integration drives (convolution mode with group 1, depthwise mode); other grouped
// convolutions fall to the next target. A BatchNormalization reading the convolution alone is
// folded into its weights and bias on the host; a Relu or Clip(0, 6) after that is applied by
// CLML's fused convolution + activation op when the driver's table has it.
#include <cmath>

#include "ops/op.hpp"

namespace tessera::clml {
namespace {

std::string check(const NodeView& node, const Device& device) {
  if (const std::string r = needs(reinterpret_cast<const void*>(device.api->create_convolution),
                                  "clCreateMLOpConvolutionForwardQCOM");
      !r.empty()) {
    return r;
  }
  std::string r = check_io(node, 4);
  if (!r.empty()) return r;
  r = check_constant(node, 1, "weights");
  if (!r.empty()) return r;
  if (node.input(1).rank != 4) return "only 2-D convolutions (rank-4 weights)";
  const int64_t group = node.attr_int("group", 1);
  const int64_t c_in = node.input(0).dims[1];
  const int64_t c_out = node.input(1).dims[0];
  if (node.has_input(2)) {
    r = check_constant(node, 2, "bias");
    if (!r.empty()) return r;
    if (plugin::tensor_numel(node.input(2)) != c_out) {
      return "bias must hold one value per output channel";
    }
  }
  if (group < 1 || c_in % group != 0 || c_out % group != 0 ||
      node.input(1).dims[1] != c_in / group) {
    return "group " + std::to_string(group) + " does not divide the channels";
  }
  if (group > 1 && !(group == c_in && c_out == c_in)) {
    return "grouped convolutions other than depthwise (group " + std::to_string(group) + ")";
  }
  const std::vector<int64_t> pads = node.attr_ints("pads", {0, 0, 0, 0});
  for (int64_t p : pads) {
    if (p < 0) return "negative pads";
  }
  return "";
}

// The BatchNormalization reading node's output alone (foldable into the weights), or -1.
int32_t foldable_batch_norm(const Lowering& lw, const NodeView& node) {
  const int32_t out = node.output_index(0);
  const std::vector<int32_t>& users = lw.consumers(out);
  if (users.size() != 1 || lw.is_region_output(out)) return -1;
  const NodeView bn(lw.region(), users[0]);
  if (bn.op_type() != "BatchNormalization" || bn.input_index(0) != out) return -1;
  if (!opencl::support::check_batch_norm_params(bn).empty()) return -1;
  for (int32_t i = 1; i < bn.num_outputs(); ++i) {
    if (bn.output_index(i) >= 0) return -1;
  }
  return users[0];
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& w = node.input(1);
  const int64_t c_out = w.dims[0];
  const int64_t per_out = plugin::tensor_numel(w) / c_out;
  std::vector<float> weights(constant_floats(node, 1),
                             constant_floats(node, 1) + plugin::tensor_numel(w));
  std::vector<float> bias(static_cast<size_t>(c_out), 0.0f);
  if (node.has_input(2)) std::copy_n(constant_floats(node, 2), c_out, bias.begin());

  // Conv -> BatchNormalization: y = (conv(x) + b) * s + t = conv'(x) with w' = w * s,
  // b' = b * s + t per output channel.
  NodeView last = node;
  const int32_t bn = foldable_batch_norm(lw, node);
  std::string folded;
  if (bn >= 0) {
    const NodeView bn_view(lw.region(), bn);
    std::vector<float> scale, shift;
    opencl::support::fold_batch_norm(bn_view, scale, shift);
    for (int64_t o = 0; o < c_out; ++o) {
      for (int64_t k = 0; k < per_out; ++k) weights[o * per_out + k] *= scale[o];
      bias[o] = bias[o] * scale[o] + shift[o];
    }
    lw.fuse(bn);
    last = bn_view;
    folded = ", \"folded_batch_norm\": \"" + bn_view.name() + "\"";
  }
  cl_activation_function_qcom function = CL_ACTIVATION_RELU;
  const int32_t act =
      lw.api().create_convolution_activation ? fuse_activation(lw, last, &function) : -1;
  const int32_t out_id =
      act >= 0 ? NodeView(lw.region(), act).output_index(0) : last.output_index(0);

  const opencl::support::Window2d win = opencl::support::window_2d(node, {w.dims[2], w.dims[3]});
  const int64_t group = node.attr_int("group", 1);
  const int64_t c_in = node.input(0).dims[1];
  const bool depthwise = group > 1 && group == c_in && c_out == c_in;
  cl_ml_op_convolution_desc_qcom desc{};
  desc.mode = depthwise ? CL_CONVOLUTION_MODE_DEPTHWISE_QCOM : CL_CONVOLUTION_MODE_CONVOLUTION_QCOM;
  desc.group_count = 1;  // depthwise is the mode, as TVM passes it
  desc.num_dimensions = 4;
  for (int k = 0; k < 2; ++k) {
    desc.input_padding_before[k] = static_cast<cl_uint>(win.pads[k]);
    desc.input_padding_after[k] = static_cast<cl_uint>(win.pads[k + 2]);
    desc.filter_stride[k] = static_cast<cl_uint>(win.strides[k]);
    desc.dilation[k] = static_cast<cl_uint>(win.dilations[k]);
  }
  desc.arithmetic_mode = lw.mode();

  cl_ml_tensor_qcom in = lw.input(node.input_index(0));
  cl_ml_tensor_qcom weight = lw.constant(dims4(w), std::move(weights));
  cl_ml_tensor_qcom b = lw.constant({1, static_cast<cl_uint>(c_out), 1, 1}, std::move(bias));
  cl_ml_tensor_qcom out = lw.output(out_id);
  const std::string attrs =
      json_attr("mode", static_cast<int64_t>(desc.mode)) + ", " + json_attr("group", group) + ", " +
      json_attr("strides", std::vector<int64_t>{win.strides[0], win.strides[1]}) + ", " +
      json_attr("dilations", std::vector<int64_t>{win.dilations[0], win.dilations[1]}) + ", " +
      json_attr("pads", std::vector<int64_t>{win.pads[0], win.pads[1], win.pads[2], win.pads[3]}) +
      (act >= 0 ? ", " + json_attr("activation", static_cast<int64_t>(function)) : "") + folded;
  cl_ml_op_qcom op = nullptr;
  if (act >= 0) {
    cl_ml_op_activation_desc_qcom act_desc{function, CL_PROPAGATE_NAN_QCOM, lw.mode()};
    const cl_int err =
        lw.api().create_convolution_activation(lw.context(), nullptr, &desc, &act_desc, in, weight,
                                               b, nullptr, out, &op, lw.tuning_cache());
    lw.add_op(index, err, op, "clCreateMLOpFusedConvolutionActivationForwardQCOM", attrs);
  } else {
    const cl_int err = lw.api().create_convolution(lw.context(), nullptr, &desc, in, weight, b, out,
                                                   &op, lw.tuning_cache());
    lw.add_op(index, err, op, "clCreateMLOpConvolutionForwardQCOM", attrs);
  }
}

}  // namespace
TESSERA_CLML_OP("Conv", check, lower);
}  // namespace tessera::clml
