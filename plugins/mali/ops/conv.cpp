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

struct Geometry {
  std::array<int64_t, 2> s, d, k;
  std::array<int64_t, 4> pads;
  int64_t group;
};

Geometry geometry_of(const NodeView& node) {
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& w = node.input(1);
  const tsr_tensor& y = node.output(0);
  const auto strides = node.attr_ints("strides", {1, 1});
  const auto dilations = node.attr_ints("dilations", {1, 1});
  Geometry g;
  g.group = node.attr_int("group", 1);
  g.s = {strides.at(0), strides.at(1)};
  g.d = {dilations.at(0), dilations.at(1)};
  g.k = {w.dims[2], w.dims[3]};
  g.pads = window_pads_2d(node, {x.dims[2], x.dims[3]}, {y.dims[2], y.dims[3]}, g.k, g.s, g.d);
  return g;
}

// Output items along dim 0 of the launch: the 1x1 kernel walks H*W as one row.
int64_t conv_width(const NodeView& node, const char* schedule_id) {
  const tsr_tensor& y = node.output(0);
  return std::string(schedule_id) == "conv2d.nchw.1x1" ? y.dims[2] * y.dims[3] : y.dims[3];
}

Config conv_default(const NodeView& node, const opencl::DeviceInfo& device,
                    const char* schedule_id) {
  const int64_t width = conv_width(node, schedule_id);
  const int32_t opw = default_outputs_per_item(width);
  return default_config(schedule_id, device, (width + opw - 1) / opw, {{"outputs_per_item", opw}});
}

// The specialised kernel the shape allows (heuristic), then the general direct kernel, which
// runs every shape.
std::vector<Config> conv_options(const NodeView& node, const opencl::DeviceInfo& device) {
  const Geometry g = geometry_of(node);
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& w = node.input(1);
  const tsr_tensor& y = node.output(0);
  const char* schedule_id = "conv2d.nchw.direct";
  if (g.group == 1 && g.k[0] == 1 && g.k[1] == 1 && g.s[0] == 1 && g.s[1] == 1 && g.pads[0] == 0 &&
      g.pads[1] == 0 && g.pads[2] == 0 && g.pads[3] == 0) {
    schedule_id = "conv2d.nchw.1x1";
  } else if (g.group == x.dims[1] && g.group == y.dims[1] && w.dims[1] == 1) {
    schedule_id = "conv2d.nchw.depthwise";
  }
  std::vector<Config> out = {conv_default(node, device, schedule_id)};
  if (std::string(schedule_id) != "conv2d.nchw.direct") {
    out.push_back(conv_default(node, device, "conv2d.nchw.direct"));
  }
  return out;
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& y = node.output(0);
  const Geometry g = geometry_of(node);
  const int64_t group = g.group;
  const auto& s = g.s;
  const auto& d = g.d;
  const auto& k = g.k;
  const auto& pads = g.pads;
  const bool has_bias = node.num_inputs() > 2 && node.has_input(2);

  const Config config = choose_config(lw, index, conv_options(node, lw.device()));
  const char* schedule_id = config.schedule->id;
  const int32_t opw = config.get("outputs_per_item");
  const int64_t items = (conv_width(node, schedule_id) + opw - 1) / opw;
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
TESSERA_MALI_TUNABLE("Conv", conv_options);
}  // namespace tessera::mali
