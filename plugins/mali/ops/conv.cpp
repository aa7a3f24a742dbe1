// Conv (2-D, float32) on the mali plugin; weights must be constants; bias and a following
// Relu/Clip/LeakyRelu (its sole consumer) are fused. Under the nchw4c region layout it always runs
// in NCHW4c (ops/conv_nchw4c.cpp: direct, 1x1, depthwise and the 3x3 stride-1 register-tiled
// schedule). Under nchw, three NCHW schedules: 1x1 (stride 1, no pad, group 1), depthwise
// (group == C == M) and the general direct kernel (groups, strides, pads, dilations).
#include "ops/conv_nchw4c.hpp"
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device&) {
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  const int32_t rank = node.input(0).rank;
  if (rank != 3 && rank != 4) {
    return "only 1-D and 2-D convolution (rank-3 NCL or rank-4 NCHW input) is implemented";
  }
  r = check_constant(node, 1, "weight");
  if (!r.empty()) return r;
  if (node.num_inputs() > 2 && node.has_input(2)) {
    r = check_constant(node, 2, "bias");
    if (!r.empty()) return r;
  }
  return "";
}

// The specialised kernel the shape allows (heuristic), then the general direct kernel, which
// runs every shape.
std::vector<Config> nchw_options(const NodeView& node, const Device& device) {
  const ConvGeometry g = conv_geometry(node);
  const char* schedule_id = is_pointwise(g)         ? "conv2d.nchw.1x1"
                            : is_depthwise(node, g) ? "conv2d.nchw.depthwise"
                                                    : "conv2d.nchw.direct";
  std::vector<Config> out = {conv_default_config(node, device, schedule_id)};
  if (std::string(schedule_id) != "conv2d.nchw.direct") {
    out.push_back(conv_default_config(node, device, "conv2d.nchw.direct"));
  }
  return out;
}

// What describe_node answers: the schedules of the default region layout.
std::vector<Config> conv_options(const NodeView& node, const Device& device) {
  // 1-D convs (rank 3) always run NCHW: NCL is NC1L in memory.
  if (kDefaultLayout == Storage::kNchw4c && node.input(0).rank == 4) {
    return conv_nchw4c_options(node, device);
  }
  return nchw_options(node, device);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  if (writes_nchw4c(lw, node)) {
    const auto options = conv_nchw4c_options(node, lw.op_device());
    lower_conv_nchw4c(lw, node, index, choose_config(lw, index, options));
    return;
  }
  // NCHW dims, a 1-D conv's as height 1.
  const std::array<int64_t, 4> x = opencl::support::nchw_dims(node.input(0));
  const std::array<int64_t, 4> y = opencl::support::nchw_dims(node.output(0));
  const ConvGeometry g = conv_geometry(node);
  const int64_t group = g.group;
  const auto& s = g.s;
  const auto& d = g.d;
  const auto& k = g.k;
  const auto& pads = g.pads;
  const bool has_bias = node.num_inputs() > 2 && node.has_input(2);

  const Config config = choose_config(lw, index, nchw_options(node, lw.op_device()));
  const bool flat = std::string(config.schedule->id) == "conv2d.nchw.1x1";
  const int32_t opw = config.get("outputs_per_item");
  const int64_t items = ((flat ? y[2] * y[3] : y[3]) + opw - 1) / opw;
  const FusedActivation act = fuse_activation(lw, node);
  opencl::Kernel kernel = lw.kernel(config);
  cl_mem wb = lw.buffer(node.input_index(1));
  kernel.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(wb)
      .buffer(has_bias ? lw.buffer(node.input_index(2)) : wb)  // unused without bias
      .buffer(lw.buffer(act.output))
      .i32x4(to_i32(x[0], node), to_i32(x[1], node), to_i32(x[2], node),
             to_i32(x[3], node))
      .i32x4(to_i32(y[0], node), to_i32(y[1], node), to_i32(y[2], node),
             to_i32(y[3], node))
      .i32x4(to_i32(k[0], node), to_i32(k[1], node), to_i32(group, node), has_bias ? 1 : 0)
      .i32x4(to_i32(s[0], node), to_i32(s[1], node), to_i32(pads[0], node), to_i32(pads[1], node))
      .i32x4(to_i32(d[0], node), to_i32(d[1], node), act.code, 0)
      .f32(act.a)
      .f32(act.b);
  const size_t rows = flat ? 1 : y[2];
  lw.add_step(index, std::move(kernel),
              {static_cast<size_t>(items), rows, static_cast<size_t>(y[0] * y[1])},
              {static_cast<size_t>(config.get("wg_x")), 1, 1}, config);
}

}  // namespace
TESSERA_MALI_OP_WITH_LAYOUT("Conv", check, lower, nchw4c_if_rank4);
TESSERA_MALI_TUNABLE("Conv", conv_options);
}  // namespace tessera::mali
