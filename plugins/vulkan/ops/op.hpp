// The vulkan op table: one file per op under ops/, each registering what it answers to a
// capability query and how it lowers a node into dispatches (region.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "region.hpp"

namespace tessera::vulkan {

struct Op {
  const char* op_type;
  // "" when the node can run here, else why not.
  std::string (*check)(const NodeView& node);
  void (*lower)(Lowering& lowering, const NodeView& node);
};

// Every registered op.
const std::vector<Op>& ops();
const Op* find_op(const std::string& op_type);

// Registers an op at load time (the table is written only while the library loads).
struct OpRegistration {
  explicit OpRegistration(const Op& op);
};

#define TESSERA_VULKAN_OP(op_type, check, lower) \
  static const ::tessera::vulkan::OpRegistration kRegistration_##op_type({#op_type, check, lower})

// ---- Helpers shared by the op files (ops/op.cpp) ----

// Shape of a tensor.
std::vector<int64_t> shape_of(const tsr_tensor& t);
// "" when input 0 and the outputs are float32, else why not: the float kernels (conv, pools,
// norms, activations...). Other dtypes kept on the device go through ops/typed.hpp's checks.
std::string float_only(const NodeView& node);
// Work-groups of `size` invocations covering `count` items, in x and y when x alone is too
// many (shaders/common.glsl's linear_id() undoes it).
Kernel linear_kernel(const std::string& shader, int64_t count, uint32_t local_size,
                     std::vector<int32_t> constants);
// Float bits as a specialization constant.
int32_t float_bits(float value);
int32_t narrow(int64_t value, const NodeView& node, const char* what);

// Activations a kernel can apply to its result (shaders/activation.glsl).
struct Activation {
  int32_t code = 0;  // 0 = none
  float a = 0.0f;
  float b = 0.0f;
};
// The activation node `node` is, or nullopt-like code 0 when it is not one the epilogue applies.
Activation activation_of(const NodeView& node);
// When the sole reader of node's output 0 is an activation the epilogue applies, fuses it and
// returns it with the value the kernel writes instead; otherwise code 0 and `out` unchanged.
Activation fuse_activation(Lowering& lowering, const NodeView& node, int32_t& out);

// Integer constant input `i` of `node` (int64 or int32 data), or `fallback` when omitted.
std::vector<int64_t> constant_ints(const NodeView& node, int32_t i,
                                   const std::vector<int64_t>& fallback);

}  // namespace tessera::vulkan
