// Resize (opset 11+) of NCHW's two trailing axes: nearest (every nearest_mode) and linear, with
// the half_pixel, pytorch_half_pixel, align_corners and asymmetric coordinate modes
// (shaders/resize.comp). Scales come from the `scales` input, else from `sizes`.
#include "ops/op.hpp"

namespace tessera::vulkan {
namespace {

int32_t coord_mode(const std::string& mode) {
  if (mode == "half_pixel") return 0;
  if (mode == "pytorch_half_pixel") return 1;
  if (mode == "align_corners") return 2;
  if (mode == "asymmetric") return 3;
  return -1;
}

int32_t nearest_mode(const std::string& mode) {
  if (mode == "round_prefer_floor") return 0;
  if (mode == "round_prefer_ceil") return 1;
  if (mode == "floor") return 2;
  if (mode == "ceil") return 3;
  return -1;
}

// The scales input (index 2), empty when absent or empty.
std::vector<float> scales_of(const NodeView& node) {
  const tsr_tensor* s = node.input(2);
  if (s == nullptr || s->data == nullptr || plugin::tensor_numel(*s) == 0) return {};
  const float* p = static_cast<const float*>(s->data);
  return std::vector<float>(p, p + plugin::tensor_numel(*s));
}

std::string check(const NodeView& node) {
  const std::string f = float_only(node);
  if (!f.empty()) return f;
  const tsr_tensor& x = *node.input(0);
  const tsr_tensor& y = *node.output(0);
  if (x.rank != 4 || y.dims[0] != x.dims[0] || y.dims[1] != x.dims[1]) {
    return "resizes of NCHW's two trailing axes only";
  }
  const std::string mode = node.attr_string("mode", "nearest");
  if (mode != "nearest" && mode != "linear") return "mode '" + mode + "'";
  if (coord_mode(node.attr_string("coordinate_transformation_mode", "half_pixel")) < 0) {
    return "coordinate_transformation_mode other than half_pixel, pytorch_half_pixel, "
           "align_corners, asymmetric";
  }
  if (nearest_mode(node.attr_string("nearest_mode", "round_prefer_floor")) < 0) {
    return "nearest_mode";
  }
  if (node.input(2) != nullptr && node.input(2)->data == nullptr) return "non-constant scales";
  if (node.attr_int("antialias", 0) != 0) return "antialias";
  return "";
}

void lower(Lowering& lowering, const NodeView& node) {
  const tsr_tensor& x = *node.input(0);
  const tsr_tensor& y = *node.output(0);
  const std::vector<float> scales = scales_of(node);
  const float scale_h = scales.size() == 4
                            ? scales[2]
                            : static_cast<float>(y.dims[2]) / static_cast<float>(x.dims[2]);
  const float scale_w = scales.size() == 4
                            ? scales[3]
                            : static_cast<float>(y.dims[3]) / static_cast<float>(x.dims[3]);
  auto n32 = [&node](int64_t v) { return narrow(v, node, "a shape"); };
  const int64_t planes = x.dims[0] * x.dims[1];
  Kernel k =
      linear_kernel("resize", planes * y.dims[2] * y.dims[3], 64,
                    {n32(planes), n32(x.dims[2]), n32(x.dims[3]), n32(y.dims[2]), n32(y.dims[3]),
                     float_bits(scale_h), float_bits(scale_w),
                     node.attr_string("mode", "nearest") == "linear" ? 1 : 0,
                     coord_mode(node.attr_string("coordinate_transformation_mode", "half_pixel")),
                     nearest_mode(node.attr_string("nearest_mode", "round_prefer_floor"))});
  lowering.dispatch(node, k, {&lowering.buffer(node.input_index(0))},
                    {&lowering.buffer(node.output_index(0))});
}

}  // namespace

TESSERA_VULKAN_OP(Resize, check, lower);

}  // namespace tessera::vulkan
