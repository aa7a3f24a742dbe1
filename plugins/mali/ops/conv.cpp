// Conv (2-D, NCHW, float32) on the mali plugin. Three schedules: 1x1 (stride 1, no pad, group 1),
// depthwise (group == C == M) and the general direct kernel (groups, strides, pads, dilations).
// Bias is fused; weights must be constants.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const opencl::DeviceInfo&) {
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  if (node.input(0).rank != 4) return "only 2-D convolution (rank-4 NCHW input) is implemented";
  r = check_constant(node, 1, "weight");
  if (!r.empty()) return r;
  if (node.num_inputs() > 2 && node.has_input(2)) {
    r = check_constant(node, 2, "bias");
    if (!r.empty()) return r;
  }
  return "";
}

// Outputs per work-item: 4 amortises each weight load over a float4-wide strip; narrow outputs
// get 1 so no lane idles. Only two values, so a model builds at most two conv programs.
int32_t default_outputs_per_item(int64_t width) {
  return width >= 4 ? 4 : 1;
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& w = node.input(1);
  const tsr_tensor& y = node.output(0);
  const int64_t group = node.attr_int("group", 1);
  const auto strides = node.attr_ints("strides", {1, 1});
  const auto dilations = node.attr_ints("dilations", {1, 1});
  const std::array<int64_t, 2> s = {strides.at(0), strides.at(1)};
  const std::array<int64_t, 2> d = {dilations.at(0), dilations.at(1)};
  const std::array<int64_t, 2> k = {w.dims[2], w.dims[3]};
  const auto pads = window_pads_2d(node, {x.dims[2], x.dims[3]}, {y.dims[2], y.dims[3]}, k, s, d);
  const bool has_bias = node.num_inputs() > 2 && node.has_input(2);

  const char* schedule_id = "conv2d.nchw.direct";
  int64_t width = y.dims[3];
  if (group == 1 && k[0] == 1 && k[1] == 1 && s[0] == 1 && s[1] == 1 && pads[0] == 0 &&
      pads[1] == 0 && pads[2] == 0 && pads[3] == 0) {
    schedule_id = "conv2d.nchw.1x1";
    width = y.dims[2] * y.dims[3];
  } else if (group == x.dims[1] && group == y.dims[1] && w.dims[1] == 1) {
    schedule_id = "conv2d.nchw.depthwise";
  }
  const int32_t opw = default_outputs_per_item(width);
  const int64_t items = (width + opw - 1) / opw;
  const Config config =
      default_config(schedule_id, lw.device(), items, {{"outputs_per_item", opw}});
  opencl::Kernel kernel = lw.kernel(config);
  const opencl::Buffer& wb = lw.buffer(node.input_id(1));
  kernel.args()
      .buffer(lw.buffer(node.input_id(0)))
      .buffer(wb)
      .buffer(has_bias ? lw.buffer(node.input_id(2)) : wb)  // unused without bias
      .buffer(lw.buffer(node.output_id(0)))
      .i32x4(to_i32(x.dims[0], node), to_i32(x.dims[1], node), to_i32(x.dims[2], node),
             to_i32(x.dims[3], node))
      .i32x4(to_i32(y.dims[0], node), to_i32(y.dims[1], node), to_i32(y.dims[2], node),
             to_i32(y.dims[3], node))
      .i32x4(to_i32(k[0], node), to_i32(k[1], node), to_i32(group, node), has_bias ? 1 : 0)
      .i32x4(to_i32(s[0], node), to_i32(s[1], node), to_i32(pads[0], node), to_i32(pads[1], node))
      .i32x4(to_i32(d[0], node), to_i32(d[1], node), /*act=*/0, 0)
      .f32(0.0f)
      .f32(0.0f);
  const size_t rows = std::string(schedule_id) == "conv2d.nchw.1x1" ? 1 : y.dims[2];
  lw.add_step(index, std::move(kernel),
              {static_cast<size_t>(items), rows, static_cast<size_t>(y.dims[0] * y.dims[1])},
              {static_cast<size_t>(config.get("wg_x")), 1, 1}, config);
}

}  // namespace
TESSERA_MALI_OP("Conv", check, lower);
}  // namespace tessera::mali
