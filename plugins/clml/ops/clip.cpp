// Clip on CLML: Clip(0, 6) is the RELU6 activation (fused into a Conv before it, conv.cpp),
// Clip(0, inf) is RELU, other bounds use CLML's clip-by-value op.
#include <limits>

#include "ops/op.hpp"

namespace tessera::clml {
namespace {

std::string check(const NodeView& node, const Device& device) {
  std::string r = check_io(node);
  if (!r.empty()) return r;
  r = opencl::support::check_clip_bounds(node);
  if (!r.empty()) return r;
  cl_activation_function_qcom fn;
  if (!fusable_activation(node, &fn) && !device.api->create_clip) {
    return "this CLML interface has no clip op for bounds other than (0, 6)";
  }
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  cl_activation_function_qcom fn;
  if (fusable_activation(node, &fn)) {
    lower_activation(lw, node, index, fn);
    return;
  }
  const auto [lo, hi] = opencl::support::clip_bounds(node);
  cl_ml_op_clip_desc_qcom desc{};
  desc.clip_mode = CL_CLIP_BY_VALUE_QCOM;
  desc.clip_value_max.u.fp32 = hi;
  desc.clip_value_max.type = CL_FLOAT;
  desc.clip_value_min.u.fp32 = lo;
  desc.clip_value_min.type = CL_FLOAT;
  desc.arithmetic_mode = lw.mode();
  cl_ml_tensor_qcom in = lw.input(node.input_index(0));
  cl_ml_tensor_qcom out = lw.output(node.output_index(0));
  cl_ml_op_qcom op = nullptr;
  const cl_int err =
      lw.api().create_clip(lw.context(), nullptr, &desc, in, out, &op, lw.tuning_cache());
  lw.add_op(index, err, op, "clCreateMLOpClipQCOM",
            "\"min\": " + std::to_string(lo) + ", \"max\": " + std::to_string(hi));
}

}  // namespace
TESSERA_CLML_OP("Clip", check, lower);
}  // namespace tessera::clml
