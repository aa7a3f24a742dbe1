// BatchNormalization (inference) on CLML's batch-norm op; one that reads a Conv alone is folded
// into the convolution instead (conv.cpp).
#include <cstring>

#include "ops/op.hpp"

namespace tessera::clml {
namespace {

std::string check(const NodeView& node, const Device& device) {
  if (const std::string r = needs(reinterpret_cast<const void*>(device.api->create_batchnorm),
                                  "clCreateMLOpBatchNormForwardQCOM");
      !r.empty()) {
    return r;
  }
  std::string r = check_io(node, 4);
  if (!r.empty()) return r;
  return opencl::support::check_batch_norm_params(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  if (lw.fused(index)) return;
  const cl_uint c = static_cast<cl_uint>(node.input(0).dims[1]);
  auto param = [&](int32_t i) {
    return lw.constant({1, c, 1, 1},
                       std::vector<float>(constant_floats(node, i), constant_floats(node, i) + c));
  };
  cl_ml_tensor_qcom in = lw.input(node.input_index(0));
  cl_ml_tensor_qcom scale = param(1), bias = param(2), mean = param(3), var = param(4);
  cl_ml_tensor_qcom out = lw.output(node.output_index(0));
  // The epsilon property carries the float's bits in the low 32 bits of the intptr_t.
  const float eps = node.attr_float("epsilon", 1e-5f);
  uint32_t bits = 0;
  std::memcpy(&bits, &eps, sizeof(bits));
  const cl_ml_op_properties_qcom props[] = {CL_ML_BATCH_NORM_OP_EPSILON_QCOM,
                                            static_cast<cl_ml_op_properties_qcom>(bits),
                                            CL_ML_OP_PROPERTY_LIST_END_QCOM};
  cl_ml_op_batchnorm_desc_qcom desc{CL_BATCHNORM_MODE_SPATIAL_QCOM, lw.mode()};
  cl_ml_op_qcom op = nullptr;
  const cl_int err = lw.api().create_batchnorm(lw.context(), props, &desc, in, mean, var, scale,
                                               bias, out, &op, lw.tuning_cache());
  lw.add_op(index, err, op, "clCreateMLOpBatchNormForwardQCOM",
            "\"epsilon\": " + std::to_string(eps));
}

}  // namespace
TESSERA_CLML_OP("BatchNormalization", check, lower);
}  // namespace tessera::clml
