// How a clml op plugs in: one file per ONNX op registers an OpLowering with check() (can CLML
// run this node? "" = yes, else the reason `plan` shows) and lower() (create its CLML op).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "interface.hpp"
#include "region.hpp"
#include "tessera_opencl/op_registry.hpp"

namespace tessera::clml {

struct Device {
  const opencl::DeviceInfo& info;
  std::shared_ptr<const Api> api;
};

struct OpLowering {
  const char* op_type;
  std::string (*check)(const NodeView& node, const Device& device);
  void (*lower)(Lowering& lowering, const NodeView& node, int32_t node_index);
};

// CLML picks its own kernels: no op lists a schedule, so nothing registers a tuning function.
using TuningOptionsFn = std::vector<opencl::support::Config> (*)(const NodeView& node,
                                                                 const Device& device);
struct ClmlOpsTag;
TESSERA_OPENCL_OP_REGISTRY(OpLowering, TuningOptionsFn, ClmlOpsTag);

#define TESSERA_CLML_OP(op_type, check_fn, lower_fn) \
  TESSERA_OPENCL_PLUGIN_OP(clml, op_type, check_fn, lower_fn)

// ---- helpers shared by the op files (shared.cpp) ----

using opencl::support::check_constant;
using opencl::support::constant_floats;

// "" when every present input and output 0 is float32 with known dims of rank <= 4 (exactly
// `rank` when it is > 0) and the values fit CLML's 32-bit dims; only output 0 may be used.
std::string check_io(const NodeView& node, int32_t rank = 0);

// "" when the interface table has `fn` (a driver may leave optional slots empty), else the reason
// naming the CLML call.
std::string needs(const void* fn, const char* call);

// "" when input 0 and output 0 are float32 of known shape (the other inputs, e.g. Pad's pads or
// Resize's scales, are read by the op file itself).
std::string check_data_io(const NodeView& node);

// Gemm / MatMul: "" when A (input 0) is a rank-2 activation and B (input 1) a constant.
std::string check_fc_operands(const NodeView& node, const Device& device);

// The activation the CLML activation descriptor can apply after node `node`'s op when `reader`
// (the sole reader of its output) is Relu or Clip(0, 6); false otherwise.
bool fusable_activation(const NodeView& reader, cl_activation_function_qcom* function);

// Relu / Clip(0, 6) reading node's output 0 alone, when it is in the region and not a region
// output: marks it fused and returns its index (its output is the op's output), else -1.
int32_t fuse_activation(Lowering& lw, const NodeView& node, cl_activation_function_qcom* function);

// "\"name\": value" JSON pieces for the dump's attributes.
std::string json_attr(const char* name, int64_t value);
std::string json_attr(const char* name, const std::vector<int64_t>& values);
std::string json_attr(const char* name, const std::string& value);

// Pooling (mode from cl_pooling_mode_qcom) of a rank-4 input: window from the node, or the whole
// plane for global modes.
std::string check_pool(const NodeView& node, const Device& device);
void lower_pool(Lowering& lw, const NodeView& node, int32_t index, cl_pooling_mode_qcom mode);

// Element-wise binary op on two inputs of one shape.
std::string check_binary(const NodeView& node, const Device& device);
void lower_binary(Lowering& lw, const NodeView& node, int32_t index, cl_binary_op_qcom op);

// One activation function on its own.
std::string check_activation(const NodeView& node, const Device& device);
void lower_activation(Lowering& lw, const NodeView& node, int32_t index,
                      cl_activation_function_qcom function);

// Reshape / Flatten: CLML's reshape op between two OPTIMAL tensors.
std::string check_reshape(const NodeView& node, const Device& device);
void lower_reshape(Lowering& lw, const NodeView& node, int32_t index);

}  // namespace tessera::clml

namespace tessera::clml {
// CLML's fully connected op for node's rank-2 input (M, K): y = x W^T + bias with `weights`
// (N x K, row-major) and `bias` (N).
void lower_fully_connected(Lowering& lw, const NodeView& node, int32_t index,
                           std::vector<float> weights, std::vector<float> bias);
}  // namespace tessera::clml
