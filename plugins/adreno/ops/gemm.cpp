// Gemm on the adreno plugin: 2-D operands do not fit the texture layout, so this runs on NCHW
// buffers (image inputs converted): alpha * op(A) * op(B) + beta * C, C broadcast from rank <= 2.
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device&) {
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  if (node.num_inputs() < 2) return "expects A and B";
  if (node.input(0).rank != 2 || node.input(1).rank != 2) return "A and B must be 2-D";
  if (node.num_inputs() > 2 && node.has_input(2) && node.input(2).rank > 2) {
    return "C must have rank <= 2";
  }
  return "";
}

opencl::support::GemmOperands operands(const NodeView& node) {
  const bool has_c = node.num_inputs() > 2 && node.has_input(2);
  return opencl::support::gemm_operands(node, node.input(0), has_c ? &node.input(2) : nullptr,
                                        node.attr_int("transA", 0) != 0,
                                        node.attr_int("transB", 0) != 0);
}

// gemm.split (the reduction split in the work-group) first where its heuristic splits (a GPU with
// too few outputs to fill it), else gemm.buffer (one output per work-item) first.
std::vector<Config> gemm_options(const NodeView& node, const Device& device) {
  const opencl::support::GemmOperands g = operands(node);
  const int32_t ks = opencl::support::gemm_default_split(g, device.info);
  Config split = device.config("gemm.split", g.n, {{"k_split", ks}});
  split.set("wg_x",
            g.n < std::max(1, 64 / ks) ? default_wg_x(*split.schedule, device.info, g.n) : 0);
  Config naive = device.config("gemm.buffer", g.n);
  if (ks > 1) return {split, naive};
  return {naive, split};
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const opencl::support::GemmOperands g = operands(node);
  const bool has_c = node.num_inputs() > 2 && node.has_input(2);
  Config config = choose_config(lw, index, lw.forced(gemm_options(node, lw.op_device())));
  std::optional<std::pair<int64_t, int64_t>> group;
  if (std::string(config.schedule->id) == "gemm.split") {
    group = opencl::support::split_group(config.get("wg_x"), config.get("k_split"), sizeof(float),
                                         lw.device());
    // A k_split whose partial sums this device cannot hold: one output per work-item.
    if (!group) config = lw.config_for("gemm.buffer", g.n);
  }
  opencl::Kernel k = lw.kernel(config);
  cl_mem ab = lw.buffer(node.input_index(0));
  cl_mem bb = lw.buffer(node.input_index(1));
  cl_mem cb = has_c ? lw.buffer(node.input_index(2)) : nullptr;
  opencl::KernelArgs args = k.args();
  opencl::support::bind_gemm(args, ab, bb, cb, lw.buffer(node.output_index(0)), g,
                             node.attr_float("alpha", 1.0f), node.attr_float("beta", 1.0f));
  if (group) {
    const auto l = opencl::support::split_launch(*group, sizeof(float), g.n, g.m);
    args.local(l.scratch_bytes);
    lw.add_step(index, std::move(k), l.global, l.local, config);
    return;
  }
  lw.add_step(index, std::move(k), {static_cast<size_t>(g.n), static_cast<size_t>(g.m)}, config);
}

}  // namespace
TESSERA_ADRENO_OP("Gemm", check, lower);
static const TuningRegistrar kGemmTuning("Gemm", gemm_options);
}  // namespace tessera::adreno
