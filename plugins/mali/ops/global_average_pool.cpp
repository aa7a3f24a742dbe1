// GlobalAveragePool on the mali plugin: one work-item per (n, c) plane.
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
  const int64_t rows = x.dims[0] * x.dims[1];
  const int64_t inner = numel_of(x) / (rows == 0 ? 1 : rows);
  const Config config = default_config("pool.global_avg", lw.device(), rows);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_id(0)))
      .buffer(lw.buffer(node.output_id(0)))
      .i32(to_i32(rows, node))
      .i32(to_i32(inner, node));
  add_1d_step(lw, index, std::move(k), rows, config);
}

}  // namespace
TESSERA_MALI_OP("GlobalAveragePool", check, lower);
}  // namespace tessera::mali
