// The group-norm kernel's launch (group_norm_common.hpp).
#include "group_norm_common.hpp"

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
  // A GPU wants many work-items busy; a CPU device runs a work-group per core and gains
  // nothing from splitting a group across work-items.
  if (device.info.kind == "gpu") return {split, per_item};
  return {per_item, split};
}

void lower_group_norm(Lowering& lw, const NodeView& node, int32_t index, int64_t groups,
                      const std::vector<float>& scale, const std::vector<float>& bias) {
  const tsr_tensor& x = node.input(0);
  const int64_t channels = x.dims[1];
  const auto [total, len] = group_extent(node, groups);
  const Config config =
      choose_config(lw, index, lw.forced(group_norm_options(node, lw.op_device(), groups)));
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
