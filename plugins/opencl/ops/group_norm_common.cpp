// The group-norm kernel's launch (group_norm_common.hpp).
#include "group_norm_common.hpp"

namespace tessera::opencl {
namespace {

const Schedule kGroupNorm{"norm.group", "norm.cl", "group_norm_f32", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kGroupNorm);

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

void lower_group_norm(Lowering& lw, const NodeView& node, int32_t index, int64_t groups,
                      const std::vector<float>& scale, const std::vector<float>& bias) {
  const tsr_tensor& x = node.input(0);
  const int64_t channels = x.dims[1];
  int64_t inner = 1;
  for (int32_t d = 2; d < x.rank; ++d) inner *= x.dims[d];
  const int64_t total = x.dims[0] * groups;
  const Config config = lw.config_for(kGroupNorm.id, total);
  Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.constant_buffer(scale))
      .buffer(lw.constant_buffer(bias))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(total, node))
      .i32(to_i32(groups, node))
      .i32(to_i32(channels / groups, node))
      .i32(to_i32(inner, node))
      .f32(node.attr_float("epsilon", 1e-5f));
  lw.add_1d_step(index, std::move(k), total, config);
}

}  // namespace tessera::opencl
