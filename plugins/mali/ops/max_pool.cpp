// MaxPool (2-D, NCHW) on the mali plugin: one work-item per output; the output size (ceil_mode
// included) comes from the region's inferred shapes.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const opencl::DeviceInfo&) {
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  if (node.input(0).rank != 4) return "only 2-D pooling (rank-4 NCHW input) is implemented";
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& y = node.output(0);
  const auto kernel = node.attr_ints("kernel_shape", {});
  const auto strides = node.attr_ints("strides", {1, 1});
  const auto dilations = node.attr_ints("dilations", {1, 1});
  const std::array<int64_t, 2> k = {kernel.at(0), kernel.at(1)};
  const std::array<int64_t, 2> s = {strides.at(0), strides.at(1)};
  const std::array<int64_t, 2> d = {dilations.at(0), dilations.at(1)};
  const auto p = window_pads_2d(node, {x.dims[2], x.dims[3]}, {y.dims[2], y.dims[3]}, k, s, d);
  const int32_t include_pad = static_cast<int32_t>(node.attr_int("count_include_pad", 0));
  const int64_t n = numel_of(y);
  const Config config = default_config("pool2d.direct", lw.device(), n);
  opencl::Kernel kern = lw.kernel(config);
  kern.args()
      .buffer(lw.buffer(node.input_id(0)))
      .buffer(lw.buffer(node.output_id(0)))
      .i32x4(to_i32(x.dims[0], node), to_i32(x.dims[1], node), to_i32(x.dims[2], node),
             to_i32(x.dims[3], node))
      .i32x4(to_i32(y.dims[0], node), to_i32(y.dims[1], node), to_i32(y.dims[2], node),
             to_i32(y.dims[3], node))
      .i32x4(to_i32(k[0], node), to_i32(k[1], node), /*mode=*/0, include_pad)
      .i32x4(to_i32(s[0], node), to_i32(s[1], node), to_i32(p[0], node), to_i32(p[1], node))
      .i32x4(to_i32(d[0], node), to_i32(d[1], node), to_i32(p[2], node), to_i32(p[3], node));
  add_1d_step(lw, index, std::move(kern), n, config);
}

}  // namespace
TESSERA_MALI_OP("MaxPool", check, lower);
}  // namespace tessera::mali
