// Instance and group norms as rows of shaders/layer_norm.comp: one row per (sample, group).
#include "ops/norm.hpp"

namespace tessera::vulkan {

std::string check_norm(const NodeView& node, int64_t params) {
  const std::string f = float_only(node);
  if (!f.empty()) return f;
  if (node.input(0)->rank < 3) return "needs (N, C, ...)";
  for (int32_t i = 1; i <= 2; ++i) {
    const tsr_tensor* t = node.input(i);
    if (t == nullptr || t->dtype != TSR_DTYPE_FLOAT32 || plugin::tensor_numel(*t) != params) {
      return "scale and bias must be float32 of " + std::to_string(params) + " values";
    }
  }
  return "";
}

void lower_norm(Lowering& lowering, const NodeView& node, int64_t groups, int64_t period,
                int64_t count) {
  const tsr_tensor& x = *node.input(0);
  const int64_t rows = x.dims[0] * groups;
  const int64_t len = rows == 0 ? 0 : plugin::tensor_numel(x) / rows;
  Kernel k = linear_kernel("layer_norm", rows, 1,
                           {narrow(rows, node, "rows"), narrow(len, node, "row length"),
                            float_bits(node.attr_float("epsilon", 1e-5f)), 1,
                            narrow(period, node, "a channel's size"), narrow(count, node, "C")});
  lowering.dispatch(node, k,
                    {&lowering.buffer(node.input_index(0)), &lowering.buffer(node.input_index(1)),
                     &lowering.buffer(node.input_index(2))},
                    {&lowering.buffer(node.output_index(0))});
}

}  // namespace tessera::vulkan
