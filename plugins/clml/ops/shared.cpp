// Helpers shared by the clml op files (op.hpp).
#include <climits>
#include <limits>

#include "ops/op.hpp"

namespace tessera::clml {

namespace {
// CLML tensors have no empty dims.
std::string check_nonempty(const tsr_tensor& t, const std::string& what) {
  for (int32_t d = 0; d < t.rank; ++d) {
    if (t.dims[d] == 0) return what + " is empty (CLML tensors have no zero dims)";
  }
  return "";
}
}  // namespace

std::string check_io(const NodeView& node, int32_t rank) {
  const char* const float_only = "(clml runs float32 models)";
  auto check = [&](const tsr_tensor& t, const std::string& what) -> std::string {
    std::string r = opencl::support::check_float_tensor(t, what, float_only);
    if (!r.empty()) return r;
    if (rank > 0 && !t.data && t.rank != rank) {
      return what + " has rank " + std::to_string(t.rank) + "; CLML's op here takes rank " +
             std::to_string(rank);
    }
    if (t.rank > 4) return what + " has rank " + std::to_string(t.rank) + " (CLML tensors are 4-D)";
    r = check_nonempty(t, what);
    if (!r.empty()) return r;
    for (int32_t d = 0; d < t.rank; ++d) {
      if (t.dims[d] > UINT_MAX / 4) return what + " has a dim too large for CLML";
    }
    return "";
  };
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) continue;
    const std::string r = check(node.input(i), "input " + std::to_string(i));
    if (!r.empty()) return r;
  }
  if (node.num_outputs() < 1 || node.output_index(0) < 0) return "output 0 is missing";
  for (int32_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output_index(i) >= 0) {
      return "optional output " + std::to_string(i) + " is not supported";
    }
  }
  return check(node.output(0), "output 0");
}

std::string needs(const void* fn, const char* call) {
  return fn ? "" : std::string("this CLML driver's interface table has no ") + call;
}

std::string check_data_io(const NodeView& node) {
  if (!node.has_input(0)) return "input 0 missing";
  if (node.num_outputs() < 1 || node.output_index(0) < 0) return "output 0 is missing";
  const char* const float_only = "(clml runs float32 models)";
  std::string r = opencl::support::check_float_tensor(node.input(0), "input 0", float_only);
  if (!r.empty()) return r;
  r = opencl::support::check_float_tensor(node.output(0), "output 0", float_only);
  if (!r.empty()) return r;
  r = check_nonempty(node.input(0), "input 0");
  return r.empty() ? check_nonempty(node.output(0), "output 0") : r;
}

std::string check_fc_operands(const NodeView& node, const Device& device) {
  if (const std::string r = needs(reinterpret_cast<const void*>(device.api->create_fully_connected),
                                  "clCreateMLOpFullyConnectedQCOM");
      !r.empty()) {
    return r;
  }
  std::string r = check_io(node, 2);
  if (!r.empty()) return r;
  if (node.input(0).data) return "input A is a constant";
  return check_constant(node, 1, "B");
}

bool fusable_activation(const NodeView& reader, cl_activation_function_qcom* function) {
  const std::string op = reader.op_type();
  if (op == "Relu") {
    *function = CL_ACTIVATION_RELU;
    return true;
  }
  if (op == "Clip") {
    if (!opencl::support::check_clip_bounds(reader).empty()) return false;
    const auto [lo, hi] = opencl::support::clip_bounds(reader);
    if (lo == 0.0f && hi == 6.0f) {
      *function = CL_ACTIVATION_RELU6;
      return true;
    }
    if (lo == 0.0f && hi == std::numeric_limits<float>::max()) {
      *function = CL_ACTIVATION_RELU;
      return true;
    }
  }
  return false;
}

int32_t fuse_activation(Lowering& lw, const NodeView& node, cl_activation_function_qcom* function) {
  const int32_t out = node.output_index(0);
  const std::vector<int32_t>& users = lw.consumers(out);
  if (users.size() != 1 || lw.is_region_output(out)) return -1;
  const NodeView act(lw.region(), users[0]);
  if (act.input_index(0) != out || act.num_outputs() < 1 || act.output_index(0) < 0) return -1;
  if (!fusable_activation(act, function)) return -1;
  lw.fuse(users[0]);
  return users[0];
}

std::string json_attr(const char* name, int64_t value) {
  return std::string("\"") + name + "\": " + std::to_string(value);
}

std::string json_attr(const char* name, const std::vector<int64_t>& values) {
  std::string s = std::string("\"") + name + "\": [";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

std::string json_attr(const char* name, const std::string& value) {
  return std::string("\"") + name + "\": \"" + value + "\"";
}

// ---- pooling ----

std::string check_pool(const NodeView& node, const Device& device) {
  std::string r = needs(reinterpret_cast<const void*>(device.api->create_pooling),
                        "clCreateMLOpPoolingForwardQCOM");
  if (!r.empty()) return r;
  r = check_io(node, 4);
  if (!r.empty()) return r;
  const std::string op = node.op_type();
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") return "";
  if (node.attr_int("ceil_mode", 0) != 0) return "ceil_mode = 1 is not supported by CLML pooling";
  const std::vector<int64_t> dil = node.attr_ints("dilations", {1, 1});
  for (int64_t d : dil) {
    if (d != 1) return "dilated pooling is not supported by CLML";
  }
  if (node.attr_ints("kernel_shape", {}).size() != 2) return "only 2-D pooling windows";
  if (op == "MaxPool" && node.attr_int("storage_order", 0) != 0) return "storage_order = 1";
  return "";
}

void lower_pool(Lowering& lw, const NodeView& node, int32_t index, cl_pooling_mode_qcom mode) {
  cl_ml_op_pooling_desc_qcom desc{};
  desc.mode = mode;
  desc.num_dimensions = 4;
  const tsr_tensor& x = node.input(0);
  std::string attrs;
  if (mode == CL_POOLING_MODE_GLOBAL_AVERAGE_QCOM || mode == CL_POOLING_MODE_GLOBAL_MAX_QCOM) {
    desc.window_size[0] = static_cast<cl_uint>(x.dims[2]);
    desc.window_size[1] = static_cast<cl_uint>(x.dims[3]);
    desc.stride[0] = desc.stride[1] = 1;
    attrs = json_attr("mode", static_cast<int64_t>(mode));
  } else {
    const opencl::support::Window2d w = opencl::support::pool_window_2d(node);
    for (int k = 0; k < 2; ++k) {
      desc.window_size[k] = static_cast<cl_uint>(w.kernel[k]);
      desc.stride[k] = static_cast<cl_uint>(w.strides[k]);
      desc.input_padding_before[k] = static_cast<cl_uint>(w.pads[k]);
      desc.input_padding_after[k] = static_cast<cl_uint>(w.pads[k + 2]);
    }
    attrs = json_attr("mode", static_cast<int64_t>(mode)) + ", " +
            json_attr("window", std::vector<int64_t>{w.kernel[0], w.kernel[1]}) + ", " +
            json_attr("strides", std::vector<int64_t>{w.strides[0], w.strides[1]}) + ", " +
            json_attr("pads", std::vector<int64_t>{w.pads[0], w.pads[1], w.pads[2], w.pads[3]});
  }
  desc.nan_propagation = CL_PROPAGATE_NAN_QCOM;
  desc.arithmetic_mode = lw.mode();
  cl_ml_tensor_qcom in = lw.input(node.input_index(0));
  cl_ml_tensor_qcom mask = lw.unused();
  cl_ml_tensor_qcom out = lw.output(node.output_index(0));
  cl_ml_op_qcom op = nullptr;
  const cl_int err =
      lw.api().create_pooling(lw.context(), nullptr, &desc, in, mask, out, &op, lw.tuning_cache());
  lw.add_op(index, err, op, "clCreateMLOpPoolingForwardQCOM", attrs);
}

// ---- binary ----

std::string check_binary(const NodeView& node, const Device& device) {
  std::string r =
      needs(reinterpret_cast<const void*>(device.api->create_binary), "clCreateMLOpBinaryQCOM");
  if (!r.empty()) return r;
  r = check_io(node);
  if (!r.empty()) return r;
  if (node.num_inputs() != 2 || !node.has_input(0) || !node.has_input(1)) return "needs 2 inputs";
  const tsr_tensor& a = node.input(0);
  const tsr_tensor& b = node.input(1);
  if (dims4(a) != dims4(b) || dims4(a) != dims4(node.output(0))) {
    return "inputs of different shapes (broadcasting) are not supported by CLML's binary op";
  }
  return "";
}

void lower_binary(Lowering& lw, const NodeView& node, int32_t index, cl_binary_op_qcom op_code) {
  cl_ml_op_binary_desc_qcom desc{};
  desc.binary_op = op_code;
  desc.alpha.u.fp32 = 1.0f;
  desc.alpha.type = CL_FLOAT;
  desc.beta.u.fp32 = 1.0f;
  desc.beta.type = CL_FLOAT;
  desc.gamma.u.fp32 = 0.0f;
  desc.gamma.type = CL_FLOAT;
  desc.arithmetic_mode = lw.mode();
  cl_ml_tensor_qcom a = lw.input(node.input_index(0));
  cl_ml_tensor_qcom b = lw.input(node.input_index(1));
  cl_ml_tensor_qcom c = lw.output(node.output_index(0));
  cl_ml_op_qcom op = nullptr;
  const cl_int err =
      lw.api().create_binary(lw.context(), nullptr, &desc, a, b, c, &op, lw.tuning_cache());
  lw.add_op(index, err, op, "clCreateMLOpBinaryQCOM",
            json_attr("binary_op", static_cast<int64_t>(op_code)));
}

// ---- activation ----

std::string check_activation(const NodeView& node, const Device& device) {
  const std::string r = needs(reinterpret_cast<const void*>(device.api->create_activation),
                              "clCreateMLOpActivationForwardQCOM");
  return r.empty() ? check_io(node) : r;
}

void lower_activation(Lowering& lw, const NodeView& node, int32_t index,
                      cl_activation_function_qcom function) {
  if (lw.fused(index)) return;  // computed by the convolution before it
  cl_ml_op_activation_desc_qcom desc{function, CL_PROPAGATE_NAN_QCOM, lw.mode()};
  cl_ml_tensor_qcom in = lw.input(node.input_index(0));
  cl_ml_tensor_qcom param = lw.unused();
  cl_ml_tensor_qcom out = lw.output(node.output_index(0));
  cl_ml_op_qcom op = nullptr;
  const cl_int err = lw.api().create_activation(lw.context(), nullptr, &desc, in, param, out, &op,
                                                lw.tuning_cache());
  lw.add_op(index, err, op, "clCreateMLOpActivationForwardQCOM",
            json_attr("function", static_cast<int64_t>(function)));
}

// ---- reshape ----

std::string check_reshape(const NodeView& node, const Device& device) {
  std::string r =
      needs(reinterpret_cast<const void*>(device.api->create_reshape), "clCreateMLOpReshapeQCOM");
  if (!r.empty()) return r;
  r = opencl::support::check_alias(node);
  if (!r.empty()) return r;
  if (node.input(0).dtype != TSR_DTYPE_FLOAT32) return "input 0 is not float32";
  if (node.input(0).rank > 4 || node.output(0).rank > 4) return "rank > 4 (CLML tensors are 4-D)";
  return "";
}

void lower_reshape(Lowering& lw, const NodeView& node, int32_t index) {
  cl_ml_tensor_qcom in = lw.input(node.input_index(0));
  cl_ml_tensor_qcom out = lw.output(node.output_index(0));
  cl_ml_op_qcom op = nullptr;
  const cl_int err =
      lw.api().create_reshape(lw.context(), nullptr, in, out, &op, lw.tuning_cache());
  lw.add_op(index, err, op, "clCreateMLOpReshapeQCOM", "");
}

}  // namespace tessera::clml

namespace tessera::clml {

void lower_fully_connected(Lowering& lw, const NodeView& node, int32_t index,
                           std::vector<float> weights, std::vector<float> bias) {
  const cl_uint k = static_cast<cl_uint>(node.input(0).dims[1]);
  const cl_uint n = static_cast<cl_uint>(bias.size());
  cl_ml_op_fully_connected_desc_qcom desc{1, CL_FC_WEIGHT_TRANSFORM_NONE_QCOM, lw.mode()};
  cl_ml_tensor_qcom in = lw.input(node.input_index(0));
  cl_ml_tensor_qcom w = lw.constant({n, k, 1, 1}, std::move(weights));
  cl_ml_tensor_qcom b = lw.constant({1, n, 1, 1}, std::move(bias));
  cl_ml_tensor_qcom out = lw.output(node.output_index(0));
  cl_ml_op_qcom op = nullptr;
  const cl_int err = lw.api().create_fully_connected(lw.context(), nullptr, &desc, in, w, b, out,
                                                     &op, lw.tuning_cache());
  lw.add_op(index, err, op, "clCreateMLOpFullyConnectedQCOM",
            json_attr("in_features", static_cast<int64_t>(k)) + ", " +
                json_attr("out_features", static_cast<int64_t>(n)));
}

}  // namespace tessera::clml
