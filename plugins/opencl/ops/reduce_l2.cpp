// ReduceL2 over the trailing axes (F.normalize's norm): one work-item per
// contiguous row (plugins/opencl/kernels/common/reduce.cl, shared with adreno), on NCHW.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

std::string check(const NodeView& node, const Device& device) {
  const std::string r = check_float_data_io(node, device.flavor.name);
  if (!r.empty()) return r;
  std::string why;
  return support::trailing_reduction(node, &why) ? "" : why;
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  std::string why;
  const auto [rows, cols] = *support::trailing_reduction(node, &why);
  const Config config = lw.config_for("reduce.rows", rows);
  Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(rows, node))
      .i32(to_i32(cols, node))
      .i32(0);
  lw.add_1d_step(index, std::move(k), rows, config);
}

}  // namespace
TESSERA_OPENCL_OP("ReduceL2", check, lower);
}  // namespace tessera::opencl
