// LayerNormalization (opset 17) over the trailing axes from `axis`, scale and bias of those
// axes' shape (shaders/layer_norm.comp); accumulates in fp32.
#include "ops/op.hpp"

namespace tessera::vulkan {
namespace {

int64_t normalized_size(const NodeView& node) {
  const tsr_tensor& x = *node.input(0);
  int64_t axis = node.attr_int("axis", -1);
  if (axis < 0) axis += x.rank;
  int64_t len = 1;
  for (int32_t i = static_cast<int32_t>(axis); i < x.rank; ++i) len *= x.dims[i];
  return len;
}

std::string check(const NodeView& node) {
  const std::string f = float_only(node);
  if (!f.empty()) return f;
  for (int32_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output(i) != nullptr) return "the Mean and InvStdDev outputs";
  }
  const int64_t len = normalized_size(node);
  for (int32_t i = 1; i <= 2; ++i) {
    const tsr_tensor* t = node.input(i);
    if (t == nullptr) continue;
    if (t->dtype != TSR_DTYPE_FLOAT32 || plugin::tensor_numel(*t) != len) {
      return "scale and bias must be float32 of the normalized axes' shape";
    }
  }
  if (node.input(1) == nullptr) return "no scale";
  return "";
}

void lower(Lowering& lowering, const NodeView& node) {
  const int64_t len = normalized_size(node);
  const int64_t rows = len == 0 ? 0 : plugin::tensor_numel(*node.input(0)) / len;
  const bool has_bias = node.input(2) != nullptr;
  Kernel k = linear_kernel("layer_norm", rows, 1,
                           {narrow(rows, node, "rows"), narrow(len, node, "row length"),
                            float_bits(node.attr_float("epsilon", 1e-5f)), has_bias ? 1 : 0});
  lowering.dispatch(node, k,
                    {&lowering.buffer(node.input_index(0)), &lowering.buffer(node.input_index(1)),
                     has_bias ? &lowering.buffer(node.input_index(2)) : &lowering.dummy()},
                    {&lowering.buffer(node.output_index(0))});
}

}  // namespace

TESSERA_VULKAN_OP(LayerNormalization, check, lower);

}  // namespace tessera::vulkan
