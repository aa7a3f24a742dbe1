// The group-norm kernel's launch (group_norm_common.hpp).
#include "group_norm_common.hpp"

#include <climits>

namespace tessera::opencl {
namespace {

const Schedule kGroupNorm{"norm.group", "norm.cl", "group_norm_f32", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kGroupNorm);
// threads_per_group work-items (a power of two) share a group.
const Schedule kGroupNormSplit{"norm.group.split",
                               "norm.cl",
                               "group_norm_split_f32",
                               {{"threads_per_group", {8, 16, 32, 64, 128, 256}, false}}};
TESSERA_OPENCL_SCHEDULE(kGroupNormSplit);
// Each group in `parts` chunks, a work-group of threads_per_group each, then an element-wise
// step that combines the chunks' statistics (norm.group.apply).
const Schedule kGroupNormParts{"norm.group.parts",
                               "norm.cl",
                               "group_norm_partial_f32",
                               {{"threads_per_group", {64, 128, 256}, false},
                                {"parts", {2, 4, 8, 16, 32, 64}, false}}};
TESSERA_OPENCL_SCHEDULE(kGroupNormParts);
const Schedule kGroupNormApply{"norm.group.apply", "norm.cl", "group_norm_apply_f32",
                               {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kGroupNormApply);

// (groups over the batch, elements per group) of input 0 normalised in `groups` groups.
std::pair<int64_t, int64_t> group_extent(const NodeView& node, int64_t groups) {
  const tsr_tensor& x = node.input(0);
  int64_t len = x.dims[1] / groups;
  for (int32_t d = 2; d < x.rank; ++d) len *= x.dims[d];
  return {x.dims[0] * groups, len};
}

}  // namespace

std::string check_group_norm(const NodeView& node, const Device& device, int64_t params) {
  if (node.num_inputs() < 3 || !node.has_input(1) || !node.has_input(2)) {
    return "scale and bias inputs are required";
  }
  const std::string r = check_float_io(node, device.flavor.name);
  if (!r.empty()) return r;
  const tsr_tensor& x = node.input(0);
  if (x.rank < 2) return "input rank below 2";
  for (int32_t i = 1; i <= 2; ++i) {
    const std::string c = check_constant(node, i, i == 1 ? "scale" : "bias");
    if (!c.empty()) return c;
    if (plugin::tensor_numel(node.input(i)) != params) {
      return std::string(i == 1 ? "scale" : "bias") + " has " +
             std::to_string(plugin::tensor_numel(node.input(i))) + " values, expected " +
             std::to_string(params);
    }
  }
  return "";
}

std::vector<Config> group_norm_options(const NodeView& node, const Device& device,
                                       int64_t groups) {
  const auto [total, len] = group_extent(node, groups);
  const Config per_item = device.config(kGroupNorm.id, total);
  if (total == 0 || len == 0) return {per_item};  // an empty launch has no work-group shape
  const Config split =
      device.config(kGroupNormSplit.id, total,
                    ConfigOverrides{{"threads_per_group", support::layer_norm_threads(len)}});
  // Chunks of about 1024 elements, so that few long groups still fill a GPU.
  int32_t parts = 2;
  while (parts < 64 && len / parts > 1024) parts *= 2;
  const Config chunked =
      device.config(kGroupNormParts.id, total,
                    ConfigOverrides{{"threads_per_group", 256}, {"parts", parts}});
  // A GPU wants many work-items busy: a work-group per group, or per chunk when the groups are
  // too few to fill it; a CPU device runs a work-group per core and gains nothing from either.
  // The element-wise step indexes with 32-bit ints.
  if (plugin::tensor_numel(node.output(0)) > INT_MAX) {
    return device.info.kind == "gpu" ? std::vector<Config>{split, per_item}
                                     : std::vector<Config>{per_item, split};
  }
  if (device.info.kind != "gpu") return {per_item, split, chunked};
  const bool few_groups = total * 256 < support::busy_work_items(device.info);
  if (few_groups && len >= 4096) return {chunked, split, per_item};
  return {split, per_item, chunked};
}

namespace {

// The two steps of norm.group.parts: chunk statistics into a scratch buffer, then the
// element-wise normalisation that combines them.
void lower_group_norm_parts(Lowering& lw, const NodeView& node, int32_t index,
                            const Config& config, int64_t groups, const std::vector<float>& scale,
                            const std::vector<float>& bias) {
  const int64_t channels = node.input(0).dims[1];
  const auto [total, len] = group_extent(node, groups);
  const int64_t threads = config.get("threads_per_group"), parts = config.get("parts");
  const cl_mem x = lw.buffer(node.input_index(0));
  const cl_mem stats = lw.scratch_buffer(checked_mul(total * parts, 3, "group norm statistics"));
  Kernel partial = lw.kernel(config);
  partial.args().buffer(x).buffer(stats).i32(to_i32(len, node)).local(
      static_cast<size_t>(threads) * sizeof(float));
  lw.add_step(index, std::move(partial),
              {static_cast<size_t>(threads), static_cast<size_t>(parts),
               static_cast<size_t>(total)},
              {static_cast<size_t>(threads), 1, 1}, config);
  const int64_t n = plugin::tensor_numel(node.output(0));
  const Config apply = lw.config_for(kGroupNormApply.id, n);
  Kernel k = lw.kernel(apply);
  k.args()
      .buffer(x)
      .buffer(stats)
      .buffer(lw.constant_buffer(scale))
      .buffer(lw.constant_buffer(bias))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(n, node))
      .i32(to_i32(parts, node))
      .i32(to_i32(groups, node))
      .i32(to_i32(channels / groups, node))
      .i32(to_i32(len / (channels / groups), node))
      .f32(node.attr_float("epsilon", 1e-5f));
  lw.add_1d_step(index, std::move(k), n, apply);
}

}  // namespace

void lower_group_norm(Lowering& lw, const NodeView& node, int32_t index, int64_t groups,
                      const std::vector<float>& scale, const std::vector<float>& bias) {
  const tsr_tensor& x = node.input(0);
  const int64_t channels = x.dims[1];
  const auto [total, len] = group_extent(node, groups);
  const Config config =
      choose_config(lw, index, lw.forced(group_norm_options(node, lw.op_device(), groups)));
  if (std::string(config.schedule->id) == kGroupNormParts.id) {
    lower_group_norm_parts(lw, node, index, config, groups, scale, bias);
    return;
  }
  Kernel k = lw.kernel(config);
  KernelArgs args = k.args();
  args.buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.constant_buffer(scale))
      .buffer(lw.constant_buffer(bias))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(total, node))
      .i32(to_i32(groups, node))
      .i32(to_i32(channels / groups, node))
      .i32(to_i32(len / (channels / groups), node))
      .f32(node.attr_float("epsilon", 1e-5f));
  if (std::string(config.schedule->id) == kGroupNormSplit.id) {
    const int64_t threads = config.get("threads_per_group");
    args.local(static_cast<size_t>(threads) * sizeof(float));
    lw.add_step(index, std::move(k), {static_cast<size_t>(threads), static_cast<size_t>(total)},
                {static_cast<size_t>(threads), 1}, config);
    return;
  }
  lw.add_1d_step(index, std::move(k), total, config);
}

}  // namespace tessera::opencl
