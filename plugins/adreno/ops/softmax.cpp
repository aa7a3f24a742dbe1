// Softmax on the adreno plugin over contiguous rows of an NCHW buffer (attention scores;
// plugins/opencl/kernels/softmax.cl, shared with mali), one work-item per row.
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device&) {
  const std::string r = check_float_io(node);
  if (!r.empty()) return r;
  return opencl::support::check_softmax_rows(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const auto [rows, cols] = opencl::support::softmax_rows(node);
  const Config config = lw.config_for("softmax.rows", rows);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(rows, node))
      .i32(to_i32(cols, node));
  lw.add_step(index, std::move(k), {static_cast<size_t>(std::max<int64_t>(rows, 1))}, config);
}

}  // namespace
TESSERA_ADRENO_OP("Softmax", check, lower);
}  // namespace tessera::adreno
