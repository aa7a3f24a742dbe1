// GlobalAveragePool on the mali plugin: one work-item per (n, c) plane, or per (n, channel block)
// in NCHW4c (it follows its input's layout). With C % 4 == 0 the NCHW4c [N, C, 1, 1] output is
// NCHW already, so a following Flatten/Gemm reads it without a conversion.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const opencl::DeviceInfo&) {
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  if (node.input(0).rank < 3) return "input must have spatial dims";
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const bool c4 = writes_nchw4c(lw, node);
  const int64_t rows = x.dims[0] * (c4 ? (x.dims[1] + 3) / 4 : x.dims[1]);
  int64_t inner = 1;  // pixels per plane (float4 in NCHW4c)
  for (int32_t d = 2; d < x.rank; ++d) inner *= x.dims[d];
  const Config config =
      default_config(c4 ? "pool.global_avg.nchw4c" : "pool.global_avg", lw.device(), rows);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_id(0)))
      .buffer(lw.buffer(node.output_id(0)))
      .i32(to_i32(rows, node))
      .i32(to_i32(inner, node));
  add_1d_step(lw, index, std::move(k), rows, config);
}

}  // namespace
TESSERA_MALI_OP_WITH_LAYOUT("GlobalAveragePool", check, lower, follow_input0);
}  // namespace tessera::mali
