// ConvTranspose, 1-D and 2-D (decoder and segmentation heads, the upsampling of OCR text
// detectors), on NCHW buffers: one work-item per output element gathers the taps that reach it
// (kernels/conv_transpose.cl). Pads follow ONNX: explicit `pads`, or from `output_shape` /
// SAME_UPPER / SAME_LOWER, the total split as the reference kernels split it. Weights and bias
// may be constants or computed values.
#include <array>
#include <climits>

#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

const Schedule kConvTranspose{
    "conv_transpose.direct", "conv_transpose.cl", "conv_transpose_f32", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kConvTranspose);

int64_t floor_half(int64_t v) {
  return v >= 0 ? v / 2 : -((-v + 1) / 2);
}

// The begin pad of spatial axis i (0-based among the spatial axes), from the output the node's
// shape already holds: total = what the taps reach - the output, split as ONNX says.
int64_t begin_pad(const NodeView& node, int32_t i, int32_t spatial) {
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& w = node.input(1);
  const auto strides = node.attr_ints("strides", std::vector<int64_t>(spatial, 1));
  const auto dilations = node.attr_ints("dilations", std::vector<int64_t>(spatial, 1));
  const auto out_pad = node.attr_ints("output_padding", std::vector<int64_t>(spatial, 0));
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  const bool derived = !node.attr_ints("output_shape", {}).empty() || auto_pad == "SAME_UPPER" ||
                       auto_pad == "SAME_LOWER";
  if (!derived) {
    if (auto_pad != "NOTSET") return 0;  // VALID
    const auto pads = node.attr_ints("pads", std::vector<int64_t>(2 * spatial, 0));
    return pads[i];
  }
  const int64_t full = strides[i] * (x.dims[2 + i] - 1) + out_pad[i] +
                       (w.dims[2 + i] - 1) * dilations[i] + 1;
  const int64_t total = full - node.output(0).dims[2 + i];
  return auto_pad == "SAME_UPPER" ? floor_half(total) : total - floor_half(total);
}

std::string check(const NodeView& node, const Device& device) {
  if (node.num_inputs() < 2 || !node.has_input(1)) return "expects input and weight";
  const std::string r = check_float_io(node, device.flavor.name);
  if (!r.empty()) return r;
  const tsr_tensor& x = node.input(0);
  if (x.rank != 3 && x.rank != 4) return "rank " + std::to_string(x.rank) + " (1-D and 2-D here)";
  if (node.input(1).rank != x.rank) return "weight rank differs from the input's";
  const int64_t group = node.attr_int("group", 1);
  if (group <= 0 || x.dims[1] % group != 0) return "group does not divide the input channels";
  if (node.output(0).dims[1] != node.input(1).dims[1] * group) {
    return "output channels are not weight dim 1 x group";
  }
  if (plugin::tensor_numel(node.output(0)) > INT_MAX || plugin::tensor_numel(x) > INT_MAX ||
      plugin::tensor_numel(node.input(1)) > INT_MAX) {
    return "more elements than 32-bit kernel indexing";
  }
  for (const char* a : {"strides", "dilations"}) {
    for (int64_t v : node.attr_ints(a, {})) {
      if (v <= 0) return std::string(a) + " must be positive";
    }
  }
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& w = node.input(1);
  const tsr_tensor& y = node.output(0);
  const int32_t spatial = x.rank - 2;
  // 1-D runs as 2-D with H = 1: the leading spatial values are the identity.
  auto hw = [&](const tsr_tensor& t, int32_t k) -> int64_t {
    return spatial == 1 ? (k == 0 ? 1 : t.dims[2]) : t.dims[2 + k];
  };
  const auto strides = node.attr_ints("strides", std::vector<int64_t>(spatial, 1));
  const auto dilations = node.attr_ints("dilations", std::vector<int64_t>(spatial, 1));
  const auto along = [&](const std::vector<int64_t>& v, int32_t k) -> int64_t {
    return spatial == 1 ? (k == 0 ? 1 : v[0]) : v[k];
  };
  const int64_t pad_h = spatial == 1 ? 0 : begin_pad(node, 0, spatial);
  const int64_t pad_w = begin_pad(node, spatial - 1, spatial);
  const bool has_bias = node.num_inputs() > 2 && node.has_input(2);
  const int64_t n = plugin::tensor_numel(y);
  const Config config = lw.config_for(kConvTranspose.id, n);
  Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.input_index(1)))
      .buffer(has_bias ? lw.buffer(node.input_index(2)) : lw.buffer(node.input_index(1)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32x4(to_i32(x.dims[0], node), to_i32(x.dims[1], node), to_i32(hw(x, 0), node),
             to_i32(hw(x, 1), node))
      .i32x4(to_i32(y.dims[0], node), to_i32(y.dims[1], node), to_i32(hw(y, 0), node),
             to_i32(hw(y, 1), node))
      .i32x4(to_i32(hw(w, 0), node), to_i32(hw(w, 1), node),
             to_i32(node.attr_int("group", 1), node), has_bias ? 1 : 0)
      .i32x4(to_i32(along(strides, 0), node), to_i32(along(strides, 1), node),
             to_i32(along(dilations, 0), node), to_i32(along(dilations, 1), node))
      .i32x4(to_i32(pad_h, node), to_i32(pad_w, node), 0, 0);
  lw.add_1d_step(index, std::move(k), n, config);
}

}  // namespace
TESSERA_OPENCL_OP("ConvTranspose", check, lower);
}  // namespace tessera::opencl
