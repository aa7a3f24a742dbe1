// ReduceL2 over the trailing axes on the mali plugin (F.normalize's norm): one work-item per
// contiguous row (plugins/opencl/kernels/reduce.cl, shared with adreno), on NCHW.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device&) {
  const std::string r = check_float_data_io(node);
  if (!r.empty()) return r;
  std::string why;
  return opencl::support::trailing_reduction(node, &why) ? "" : why;
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  std::string why;
  const auto [rows, cols] = *opencl::support::trailing_reduction(node, &why);
  const Config config = lw.config_for("reduce.rows", rows);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(rows, node))
      .i32(to_i32(cols, node))
      .i32(0);
  lw.add_1d_step(index, std::move(k), rows, config);
}

}  // namespace
TESSERA_MALI_OP("ReduceL2", check, lower);
}  // namespace tessera::mali
