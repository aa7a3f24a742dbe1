// ReduceL2 over the trailing axes on the adreno plugin (F.normalize's norm): one work-item per
// contiguous row of an NCHW buffer (plugins/opencl/kernels/reduce.cl, shared with mali).
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device&) {
  if (!node.has_input(0) || node.num_outputs() < 1 || node.output_index(0) < 0) {
    return "input 0 or output 0 missing";
  }
  const char* const float_only = "(adreno runs float32 models)";
  std::string r = opencl::support::check_float_tensor(node.input(0), "input 0", float_only);
  if (!r.empty()) return r;
  r = opencl::support::check_float_tensor(node.output(0), "output 0", float_only);
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
  lw.add_step(index, std::move(k), {static_cast<size_t>(std::max<int64_t>(rows, 1))}, config);
}

}  // namespace
TESSERA_ADRENO_OP("ReduceL2", check, lower);
}  // namespace tessera::adreno
