// Where: cond ? a : b with the three operands broadcast to the output (masked_fill, attention
// masks), any dtype device memory holds, rank <= 6 (kernels/common/strided.cl where_strided),
// for every OpenCL plugin.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

const Schedule kWhere{"where.strided", "strided.cl", "where_strided", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kWhere);

std::string check(const NodeView& node, const Device&) {
  if (node.num_inputs() != 3) return "expects 3 inputs";
  const std::string r = check_broadcast_operands(node);
  if (!r.empty()) return r;
  if (node.input(0).dtype != TSR_DTYPE_BOOL) return "the condition is not bool";
  for (int32_t i = 1; i < 3; ++i) {
    if (node.input(i).dtype != node.output(0).dtype) {
      return "input " + std::to_string(i) + "'s dtype differs from the output's";
    }
  }
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& y = node.output(0);
  const int64_t n = plugin::tensor_numel(y);
  const support::StridedCopy wc = support::broadcast_walk(node, node.input(0), y);
  const support::StridedCopy wa = support::broadcast_walk(node, node.input(1), y);
  const support::StridedCopy wb = support::broadcast_walk(node, node.input(2), y);
  const Config config = lw.config_for(kWhere.id, n);
  Kernel k = lw.kernel(config, element_defines(y));
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.input_index(1)))
      .buffer(lw.buffer(node.input_index(2)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(n, node))
      .i32x8(wc.dims)
      .i32x8(wc.strides)
      .i32x8(wa.strides)
      .i32x8(wb.strides);
  lw.add_1d_step(index, std::move(k), n, config);
}

}  // namespace
TESSERA_OPENCL_OP("Where", check, lower);
}  // namespace tessera::opencl
