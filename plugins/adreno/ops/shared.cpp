// Shared lowerings (see shared.hpp).
#include "ops/shared.hpp"

#include "tessera/error.hpp"

namespace tessera::adreno {

std::vector<size_t> texel_range(const tsr_tensor& t) {
  const auto e = texture_extent(t);
  return {static_cast<size_t>(e[0]), static_cast<size_t>(e[1])};
}

void lower_unary(Lowering& lw, const NodeView& node, int32_t index, UnaryOp op, float a, float b) {
  const tsr_tensor& y = node.output(0);
  const auto range = texel_range(y);
  const Config config = lw.config_for("eltwise.image.unary", range[0]);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.input_image(node.input_id(0), index))
      .buffer(lw.output_image(node.output_id(0), index))
      .i32x4(to_i32(range[0], node), to_i32(range[1], node), 0, 0)
      .i32(static_cast<int32_t>(op))
      .f32(a)
      .f32(b);
  lw.add_step(index, std::move(k), range, config);
}

std::string check_pool(const NodeView& node, const Device& device) {
  std::string r = check_image_io(node, device);
  if (!r.empty()) return r;
  if (node.attr_ints("kernel_shape", {}).size() != 2) return "kernel_shape must have 2 values";
  if (node.attr_int("storage_order", 0) != 0) return "storage_order = 1 is not supported";
  return "";
}

void lower_pool(Lowering& lw, const NodeView& node, int32_t index, int32_t mode) {
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& y = node.output(0);
  const auto [k, s, d, p] = opencl::support::pool_window_2d(node);
  const int32_t include_pad =
      mode == 1 ? static_cast<int32_t>(node.attr_int("count_include_pad", 0)) : 0;
  const auto in = blocked_dims(x, node);
  const auto out = blocked_dims(y, node);
  const auto range = texel_range(y);
  const Config config = lw.config_for("pool2d.image", range[0]);
  opencl::Kernel kern = lw.kernel(config);
  kern.args()
      .buffer(lw.input_image(node.input_id(0), index))
      .buffer(lw.output_image(node.output_id(0), index))
      .i32x4(in[0], in[1], in[2], in[3])
      .i32x4(out[0], out[1], out[2], out[3])
      .i32x4(to_i32(k[0], node), to_i32(k[1], node), mode, include_pad)
      .i32x4(to_i32(s[0], node), to_i32(s[1], node), to_i32(p[0], node), to_i32(p[1], node))
      .i32x4(to_i32(d[0], node), to_i32(d[1], node), to_i32(p[2], node), to_i32(p[3], node));
  lw.add_step(index, std::move(kern), range, config);
}

std::string check_alias(const NodeView& node, const Device&) {
  return opencl::support::check_alias(node);
}

void lower_alias(Lowering& lw, const NodeView& node, int32_t index) {
  lw.alias_buffer(node.output_id(0), node.input_id(0), index);
}

}  // namespace tessera::adreno
