// Conv over a rank-3 [N, C, L] input (a 1-D conv: audio front ends, voice-activity detectors, ECA
// attention) on NCHW buffers, for the OpenCL plugins whose own Conv does not take it (adreno's
// image kernels lay a rank-3 value out as [1, N, C, L]). NCL is NC1L in memory, so the shared
// direct kernel (kernels/common/conv_direct.cl) runs it as a 2-D conv of height 1 with its
// groups, stride, dilation and pads. Weights (and bias) must be constants.
#include "tessera/checked_math.hpp"
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

// wg_x, outputs per work-item (OPW) and the unroll of the input-channel loop; mali's NCHW
// fallback for every Conv shape (plugins/mali/ops/conv.cpp) uses it as well.
const Schedule kConvDirect{"conv2d.nchw.direct",
                           "conv_direct.cl",
                           "conv2d_direct_f32",
                           {wg_x_knob(),
                            {"outputs_per_item", {1, 2, 4, 8}, true, "OPW"},
                            {"unroll", {1, 2, 4}, true}}};
TESSERA_OPENCL_SCHEDULE(kConvDirect);

std::string check(const NodeView& node, const Device& device) {
  std::string r = check_float_io(node, device.flavor.name);
  if (!r.empty()) return r;
  if (node.input(0).rank != 3) return "only a 1-D conv (rank-3 input) runs on shared buffers";
  r = check_constant(node, 1, "weight");
  if (!r.empty()) return r;
  if (node.input(1).rank != 3) return "weight is not rank 3";
  if (node.num_inputs() > 2 && node.has_input(2)) return check_constant(node, 2, "bias");
  return "";
}

std::vector<Config> options(const NodeView& node, const Device& device) {
  const int64_t width = node.output(0).dims[2];
  // Four outputs per work-item amortise each weight load; narrow outputs take one.
  const int32_t opw = width >= 4 ? 4 : 1;
  return {device.config(kConvDirect.id, (width + opw - 1) / opw, {{"outputs_per_item", opw}})};
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const std::array<int64_t, 4> x = support::nchw_dims(node.input(0));
  const std::array<int64_t, 4> y = support::nchw_dims(node.output(0));
  const support::Window2d w = support::window_2d(node, {1, node.input(1).dims[2]});
  const bool has_bias = node.num_inputs() > 2 && node.has_input(2);
  const Config config = choose_config(lw, index, lw.forced(options(node, lw.op_device())));
  const int32_t opw = config.get("outputs_per_item");
  Kernel k = lw.kernel(config);
  const cl_mem weights = lw.buffer(node.input_index(1));
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(weights)
      .buffer(has_bias ? lw.buffer(node.input_index(2)) : weights)  // unused without bias
      .buffer(lw.buffer(node.output_index(0)))
      .i32x4(to_i32(x[0], node), to_i32(x[1], node), to_i32(x[2], node), to_i32(x[3], node))
      .i32x4(to_i32(y[0], node), to_i32(y[1], node), to_i32(y[2], node), to_i32(y[3], node))
      .i32x4(to_i32(w.kernel[0], node), to_i32(w.kernel[1], node),
             to_i32(node.attr_int("group", 1), node), has_bias ? 1 : 0)
      .i32x4(to_i32(w.strides[0], node), to_i32(w.strides[1], node), to_i32(w.pads[0], node),
             to_i32(w.pads[1], node))
      .i32x4(to_i32(w.dilations[0], node), to_i32(w.dilations[1], node), 0, 0)
      .f32(0.0f)
      .f32(0.0f);
  lw.add_step(index, std::move(k),
              {static_cast<size_t>((y[3] + opw - 1) / opw), 1,
               static_cast<size_t>(checked_mul(y[0], y[1], "conv output planes"))},
              {static_cast<size_t>(config.get("wg_x")), 1, 1}, config);
}

}  // namespace
TESSERA_OPENCL_OP("Conv", check, lower);
TESSERA_OPENCL_TUNABLE("Conv", options);
}  // namespace tessera::opencl
