// Softmax. Before opset 13 the input is viewed as 2-D at `axis` (any axis
// works); from opset 13 the axis must be the last one (rows are contiguous).
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

std::string check(const NodeView& node, const Device& device) {
  const std::string r = check_float_io(node, device.flavor.name);
  if (!r.empty()) return r;
  return support::check_softmax_rows(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const auto [rows, cols] = support::softmax_rows(node);
  const Config config = lw.config_for("softmax.rows", rows);
  Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(rows, node))
      .i32(to_i32(cols, node));
  lw.add_1d_step(index, std::move(k), rows, config);
}

}  // namespace
TESSERA_OPENCL_OP("Softmax", check, lower);
}  // namespace tessera::opencl
