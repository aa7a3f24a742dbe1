// LayerNormalization on the mali plugin: normalises the contiguous rows formed by the axes from
// `axis` to the last, one work-item per row; Scale (and B when given) constants with one value per
// row element. The optional Mean and InvStdDev outputs are refused.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const opencl::DeviceInfo&) {
  const std::string r = check_float_io(node);
  if (!r.empty()) return r;
  return opencl::support::check_layer_norm(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const auto [rows, cols] = opencl::support::layer_norm_rows(node);
  const bool has_bias = node.has_input(2);
  const Config config = default_config("layer_norm.rows", lw.device(), rows);
  opencl::Kernel k = lw.kernel(config);
  const opencl::Buffer& scale = lw.buffer(node.input_id(1));
  k.args()
      .buffer(lw.buffer(node.input_id(0)))
      .buffer(scale)
      .buffer(has_bias ? lw.buffer(node.input_id(2)) : scale)
      .buffer(lw.buffer(node.output_id(0)))
      .i32(to_i32(rows, node))
      .i32(to_i32(cols, node))
      .f32(node.attr_float("epsilon", 1e-5f))
      .i32(has_bias ? 1 : 0);
  add_1d_step(lw, index, std::move(k), rows, config);
}

}  // namespace
TESSERA_MALI_OP("LayerNormalization", check, lower);
}  // namespace tessera::mali
