// MatMul on the mali plugin: 2-D x 2-D through the Gemm kernel; batched operands (attention's
// Q K^T and A V, Linear layers over [B, N, C]) through the shared batched kernel
// (plugins/opencl/kernels/matmul.cl), B with A's batch dims or 2-D.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

bool two_d(const NodeView& node) {
  return node.input(0).rank == 2 && node.input(1).rank == 2;
}

std::string check(const NodeView& node, const Device&) {
  const std::string r = check_float_io(node);
  if (!r.empty()) return r;
  return two_d(node) ? "" : opencl::support::check_matmul_batched(node);
}

// 2-D: Gemm's configs; batched: matmul.tiled first where its heuristic runs it (GPUs), then
// matmul.batched (one output per work-item), then matmul.tiled on CPU devices.
std::vector<Config> options(const NodeView& node, const Device& device) {
  if (two_d(node)) return gemm_options(node, device);
  return opencl::support::batched_matmul_options(
      opencl::support::batched_matmul(node), device,
      [&](const char* id, int64_t dim0, const opencl::support::ConfigOverrides& o) {
        return device.config(id, dim0, o);
      });
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  if (two_d(node)) {
    lower_gemm(lw, node, index, node.input_index(0), node.input_index(1), -1, false, false, 1.0f,
               0.0f);
    return;
  }
  const opencl::support::BatchedMatMul mm = opencl::support::batched_matmul(node);
  Config config = choose_config(lw, index, options(node, lw.op_device()));
  const bool tiled = std::string(config.schedule->id) == "matmul.tiled";
  // A tile this device cannot launch (group or __local slices too large): one output per item.
  if (tiled && !opencl::support::tiled_matmul_fits(opencl::support::tiled_matmul_of(config),
                                                   lw.op_device())) {
    config = lw.config_for("matmul.batched", mm.n);
  }
  opencl::Kernel k = lw.kernel(config);
  opencl::support::bind_batched_matmul(k, lw.buffer(node.input_index(0)),
                                       lw.buffer(node.input_index(1)),
                                       lw.buffer(node.output_index(0)), mm);
  if (std::string(config.schedule->id) == "matmul.tiled") {
    auto [global, local] =
        opencl::support::tiled_matmul_range(mm, opencl::support::tiled_matmul_of(config));
    lw.add_step(index, std::move(k), std::move(global), std::move(local), config);
    return;
  }
  lw.add_step(index, std::move(k),
              opencl::support::batched_matmul_range(mm, config.get("rows_per_item"),
                                                    config.get("cols_per_item")),
              {static_cast<size_t>(config.get("wg_x")), static_cast<size_t>(config.get("wg_y")), 1},
              config);
}

}  // namespace
TESSERA_MALI_OP("MatMul", check, lower);
TESSERA_MALI_TUNABLE("MatMul", options);
}  // namespace tessera::mali
