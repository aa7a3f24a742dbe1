// Resize in mode "nearest" of a float tensor of rank <= 4 (every YOLO/FPN upsampling, OCR
// detectors): the source index along each axis follows ONNX's coordinate transformation and
// nearest_mode, computed on the host once; the kernel (kernels/resize.cl) copies one element per
// work-item. Constant scales or sizes, any axis resized; the bilinear kernels of the plugins run
// mode "linear" before this is asked.
#include <cmath>

#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

const Schedule kNearest{"resize.nearest", "resize.cl", "resize_nearest_f32", {wg_x_knob()}};
TESSERA_OPENCL_SCHEDULE(kNearest);

std::string coordinate_mode(const NodeView& node) {
  return node.opset() >= 11 ? node.attr_string("coordinate_transformation_mode", "half_pixel")
                            : "asymmetric";
}

std::string rounding(const NodeView& node) {
  return node.opset() >= 11 ? node.attr_string("nearest_mode", "round_prefer_floor") : "opset10";
}

// Per-axis scales: the constant `scales` input, else output / input (sizes given).
std::vector<float> axis_scales(const NodeView& node) {
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& y = node.output(0);
  const int32_t scales_input = node.opset() >= 11 ? 2 : 1;
  std::vector<float> scales(static_cast<size_t>(x.rank));
  const bool given = node.num_inputs() > scales_input && node.has_input(scales_input) &&
                     plugin::tensor_numel(node.input(scales_input)) == x.rank;
  for (int32_t d = 0; d < x.rank; ++d) {
    scales[d] = given ? constant_floats(node, scales_input)[d]
                      : static_cast<float>(y.dims[d]) / static_cast<float>(x.dims[d]);
  }
  return scales;
}

std::string check(const NodeView& node, const Device& device) {
  if (node.attr_string("mode", "nearest") != "nearest") return "only mode 'nearest' here";
  if (!node.has_input(0) || node.input(0).dtype != TSR_DTYPE_FLOAT32) {
    return "input 0 is not float32";
  }
  const tsr_tensor& x = node.input(0);
  if (x.rank < 1 || x.rank > 4) return "rank " + std::to_string(x.rank) + " (1 to 4 here)";
  for (int32_t d = 0; d < x.rank; ++d) {
    if (x.dims[d] <= 0) return "an empty input axis";
  }
  const std::string mode = coordinate_mode(node);
  if (mode != "half_pixel" && mode != "pytorch_half_pixel" && mode != "align_corners" &&
      mode != "asymmetric" && mode != "tf_half_pixel_for_nearest") {
    return "coordinate_transformation_mode '" + mode + "' is not supported here";
  }
  const std::string round = rounding(node);
  if (round != "round_prefer_floor" && round != "round_prefer_ceil" && round != "floor" &&
      round != "ceil" && round != "opset10") {
    return "nearest_mode '" + round + "' is not supported here";
  }
  if (node.find_attribute("axes") != nullptr) return "the axes attribute is not supported here";
  if (node.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch") {
    return "keep_aspect_ratio_policy other than stretch";
  }
  const int32_t scales_input = node.opset() >= 11 ? 2 : 1;
  if (node.num_inputs() > scales_input && node.has_input(scales_input) &&
      plugin::tensor_numel(node.input(scales_input)) > 0) {
    const std::string c = check_constant(node, scales_input, "scales");
    if (!c.empty()) return c;
    if (node.input(scales_input).dtype != TSR_DTYPE_FLOAT32) return "scales are not float32";
  }
  // The output shape is core's (shape inference); nothing below needs the sizes input itself.
  const std::string io = check_float_data_io(node, device.flavor.name);
  if (!io.empty()) return io;
  return node.output(0).rank == x.rank ? "" : "output rank differs from the input's";
}

// Source index along one axis for each output coordinate (ONNX's formulas, in float32 as the
// reference kernels compute them).
std::vector<float> axis_indices(const std::string& mode, const std::string& round, float scale,
                                int64_t in_len, int64_t out_len) {
  std::vector<float> out(static_cast<size_t>(out_len));
  for (int64_t i = 0; i < out_len; ++i) {
    const float x = static_cast<float>(i);
    float c = x / scale;
    if (mode == "half_pixel") c = (x + 0.5f) / scale - 0.5f;
    if (mode == "pytorch_half_pixel") c = out_len > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    if (mode == "tf_half_pixel_for_nearest") c = (x + 0.5f) / scale;
    if (mode == "align_corners") {
      c = out_len == 1 ? 0.0f
                       : x * static_cast<float>(in_len - 1) / static_cast<float>(out_len - 1);
    }
    std::string r = round;
    if (r == "opset10") r = scale < 1.0f ? "ceil" : "floor";
    const float fl = std::floor(c);
    float s = std::round(c);
    if (r == "floor") s = fl;
    if (r == "ceil") s = std::ceil(c);
    if ((r == "round_prefer_floor" || r == "round_prefer_ceil") && c - fl == 0.5f) {
      s = r == "round_prefer_floor" ? fl : fl + 1.0f;
    }
    out[static_cast<size_t>(i)] = static_cast<float>(
        std::min<int64_t>(std::max<int64_t>(static_cast<int64_t>(s), 0), in_len - 1));
  }
  return out;
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& y = node.output(0);
  const std::vector<float> scales = axis_scales(node);
  const std::array<int64_t, 4> in4 = view4(x), out4 = view4(y);
  std::vector<float> table;
  for (int32_t d = 0; d < 4; ++d) {
    const int32_t axis = d - (4 - x.rank);
    const std::vector<float> idx = axis < 0 ? std::vector<float>{0.0f}
                                            : axis_indices(coordinate_mode(node), rounding(node),
                                                           scales[axis], in4[d], out4[d]);
    table.insert(table.end(), idx.begin(), idx.end());
  }
  const int64_t n = plugin::tensor_numel(y);
  const Config config = lw.config_for(kNearest.id, n);
  Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.constant_buffer(table))
      .buffer(lw.buffer(node.output_index(0)))
      .i32x4(to_i32(out4[0], node), to_i32(out4[1], node), to_i32(out4[2], node),
             to_i32(out4[3], node))
      .i32x4(to_i32(in4[0], node), to_i32(in4[1], node), to_i32(in4[2], node),
             to_i32(in4[3], node));
  lw.add_1d_step(index, std::move(k), n, config);
}

}  // namespace
TESSERA_OPENCL_OP("Resize", check, lower);
}  // namespace tessera::opencl
