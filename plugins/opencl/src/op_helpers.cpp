// Helpers shared by the OpenCL ops (tessera_opencl/op_helpers.hpp).
#include "tessera_opencl/op_helpers.hpp"

#include <algorithm>

namespace tessera::opencl {

std::string check_float_io(const NodeView& node, const char* plugin) {
  const std::string float_only = std::string("(") + plugin + " runs float32 only)";
  const std::string r = support::check_float_inputs(node, float_only.c_str());
  if (!r.empty()) return r;
  if (node.num_outputs() < 1 || node.output_index(0) < 0) return "output 0 is missing";
  for (int32_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output_index(i) >= 0) {
      return "optional output " + std::to_string(i) + " is not supported";
    }
  }
  return support::check_float_tensor(node.output(0), "output 0", float_only.c_str());
}

std::string check_float_data_io(const NodeView& node, const char* plugin) {
  if (!node.has_input(0) || node.input(0).dtype != TSR_DTYPE_FLOAT32) {
    return std::string("input 0 is not float32 (") + plugin + " runs float32 only)";
  }
  for (int32_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output_index(i) >= 0) {
      return "optional output " + std::to_string(i) + " is not supported";
    }
  }
  if (node.output_index(0) < 0 || node.output(0).dtype != TSR_DTYPE_FLOAT32) {
    return "output 0 is not float32";
  }
  return "";
}

std::string check_alias(const NodeView& node, const Device&) {
  return support::check_alias(node);
}

void lower_alias(Lowering& lw, const NodeView& node, int32_t) {
  lw.alias(node.output_index(0), node.input_index(0));
}

StoragePlan follow_input0(const NodeView& node, const Lowering& lowering) {
  if (node.input(0).rank != 4 || lowering.storage(node.input_index(0)) != Storage::kNchw4c) {
    return {};
  }
  return {Storage::kNchw4c, {0}};
}

void lower_strided_copy(Lowering& lw, const NodeView& node, int32_t index,
                        const support::StridedCopy& copy, int32_t output) {
  const int64_t n = plugin::tensor_numel(node.output(output));
  const Config config = lw.config_for("copy.strided", n);
  Kernel k = lw.kernel(config);
  support::bind_strided_copy(k, lw.buffer(node.input_index(0)),
                             lw.buffer(node.output_index(output)), to_i32(n, node), copy);
  lw.add_1d_step(index, std::move(k), n, config);
}

}  // namespace tessera::opencl
