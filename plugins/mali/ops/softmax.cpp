// Softmax on the mali plugin. Before opset 13 the input is viewed as 2-D at `axis` (any axis
// works); from opset 13 the axis must be the last one (rows are contiguous).
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

int64_t normalized_axis(const NodeView& node) {
  return mali::normalized_axis(node, node.opset() < 13 ? 1 : -1);
}

std::string check(const NodeView& node, const opencl::DeviceInfo&) {
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  const int64_t rank = node.input(0).rank;
  const int64_t axis = normalized_axis(node);
  if (rank == 0 || axis < 0 || axis >= rank) return "axis out of range";
  if (node.opset() >= 13 && axis != rank - 1) return "only the last axis is implemented";
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const int64_t axis = normalized_axis(node);
  int64_t rows = 1;
  for (int64_t d = 0; d < axis; ++d) rows *= x.dims[d];
  const int64_t cols = rows == 0 ? 0 : numel_of(x) / rows;
  const Config config = default_config("softmax.rows", lw.device(), rows);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_id(0)))
      .buffer(lw.buffer(node.output_id(0)))
      .i32(to_i32(rows, node))
      .i32(to_i32(cols, node));
  add_1d_step(lw, index, std::move(k), rows, config);
}

}  // namespace
TESSERA_MALI_OP("Softmax", check, lower);
}  // namespace tessera::mali
