// IsInf of a float32 tensor, to bool (kernels/compare.cl classify_f32), for every OpenCL plugin:
// the guards torch.nan_to_num and isfinite export.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

std::string check(const NodeView& node, const Device&) {
  if (node.num_inputs() != 1 || !node.has_input(0) || node.num_outputs() != 1 ||
      node.output_index(0) < 0) {
    return "expects 1 input and 1 output";
  }
  if (node.input(0).dtype != TSR_DTYPE_FLOAT32) return "input 0 is not float32";
  if (node.output(0).dtype != TSR_DTYPE_BOOL) return "output 0 is not bool";
  return support::check_data_tensor(node.input(0), "input 0");
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const int64_t n = plugin::tensor_numel(node.output(0));
  const Config config = lw.config_for("classify", n);
  Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(n, node))
      .i32(1)
      .i32(node.attr_int("detect_positive", 1) != 0 ? 1 : 0)
      .i32(node.attr_int("detect_negative", 1) != 0 ? 1 : 0);
  lw.add_1d_step(index, std::move(k), n, config);
}

}  // namespace
TESSERA_OPENCL_OP("IsInf", check, lower);
}  // namespace tessera::opencl
