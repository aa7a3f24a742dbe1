// MatMul on NCHW buffers for every OpenCL plugin (kernels/matmul.cl): A (..., M, K) times B (...,
// K, N) with the batch dims flattened, where B either has A's batch dims (attention's Q K^T and A
// V) or none (a 2-D weight shared by every row, as in a Linear layer). A 1-D operand and other
// broadcasts fall back with the reason.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

std::string check(const NodeView& node, const Device& device) {
  const std::string r = check_float_io(node, device.flavor.name);
  if (!r.empty()) return r;
  return support::check_matmul_batched(node);
}

// matmul.tiled first where its heuristic runs it (GPUs), then matmul.batched (one output per
// work-item), then matmul.tiled on CPU devices.
std::vector<Config> options(const NodeView& node, const Device& device) {
  return support::batched_matmul_options(
      support::batched_matmul(node), device.info,
      [&](const char* id, int64_t dim0, const support::ConfigOverrides& o) {
        return device.config(id, dim0, o);
      });
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const support::BatchedMatMul mm = support::batched_matmul(node);
  Config config = choose_config(lw, index, lw.forced(options(node, lw.op_device())));
  // A tile this device cannot launch (group or __local slices too large): one output per item.
  if (std::string(config.schedule->id) == "matmul.tiled" &&
      !support::tiled_matmul_fits(support::tiled_matmul_of(config), lw.device())) {
    config = lw.config_for("matmul.batched", mm.n);
  }
  Kernel k = lw.kernel(config);
  support::bind_batched_matmul(k, lw.buffer(node.input_index(0)), lw.buffer(node.input_index(1)),
                               lw.buffer(node.output_index(0)), mm);
  if (std::string(config.schedule->id) == "matmul.tiled") {
    auto [global, local] = support::tiled_matmul_range(mm, support::tiled_matmul_of(config));
    lw.add_step(index, std::move(k), std::move(global), std::move(local), config);
    return;
  }
  // The config's tile, not the heuristic's: a `knob.*` target option may have forced another.
  lw.add_step(
      index, std::move(k),
      support::batched_matmul_range(mm, config.get("rows_per_item"), config.get("cols_per_item")),
      config);
}

}  // namespace
TESSERA_OPENCL_OP("MatMul", check, lower);
TESSERA_OPENCL_TUNABLE("MatMul", options);
}  // namespace tessera::opencl
