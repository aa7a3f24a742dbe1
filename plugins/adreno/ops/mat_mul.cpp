// MatMul on the adreno plugin, on NCHW buffers (plugins/opencl/kernels/matmul.cl, shared with
// mali): A (..., M, K) times B (..., K, N) with the batch dims flattened, where B either has A's
// batch dims (attention's Q K^T and A V) or none (a 2-D weight shared by every row, as in a
// Linear layer). A 1-D operand and other broadcasts fall back with the reason.
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device&) {
  const std::string r = check_float_io(node);
  if (!r.empty()) return r;
  return opencl::support::check_matmul_batched(node);
}

// matmul.batched with the heuristic's tile first, then one output per work-item.
std::vector<Config> options(const NodeView& node, const Device& device) {
  const opencl::support::BatchedMatMul mm = opencl::support::batched_matmul(node);
  const auto [rows, cols] = opencl::support::matmul_default_tile(mm, device.info);
  std::vector<Config> out = {default_config("matmul.batched", device.info, (mm.n + cols - 1) / cols,
                                            {{"rows_per_item", rows}, {"cols_per_item", cols}})};
  if (rows * cols > 1) out.push_back(default_config("matmul.batched", device.info, mm.n));
  return out;
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const opencl::support::BatchedMatMul mm = opencl::support::batched_matmul(node);
  const Config config = choose_config(lw, index, lw.forced(options(node, Device{lw.device(), {}})));
  opencl::Kernel k = lw.kernel(config);
  opencl::support::bind_batched_matmul(k, lw.input_buffer(node.input_id(0), index),
                                       lw.input_buffer(node.input_id(1), index),
                                       lw.output_buffer(node.output_id(0), index), mm);
  // The config's tile, not the heuristic's: a `knob.*` target option may have forced another.
  lw.add_step(index, std::move(k),
              opencl::support::batched_matmul_range(mm, config.get("rows_per_item"),
                                                    config.get("cols_per_item")),
              config);
}

}  // namespace
TESSERA_ADRENO_OP("MatMul", check, lower);
static const TuningRegistrar kMatMulTuning("MatMul", options);
}  // namespace tessera::adreno
