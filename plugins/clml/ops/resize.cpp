// Resize in mode "linear" over H and W of a rank-4 tensor on CLML's bilinear resize op:
// coordinate_transformation_mode half_pixel / pytorch_half_pixel (half-pixel centres),
// align_corners, or asymmetric. Nearest and cubic fall back to the next target.
#include "ops/op.hpp"

namespace tessera::clml {
namespace {

std::string check(const NodeView& node, const Device&) {
  const std::string r = check_data_io(node);
  if (!r.empty()) return r;
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& y = node.output(0);
  if (x.rank != 4 || y.rank != 4) return "only rank-4 tensors";
  if (x.dims[0] != y.dims[0] || x.dims[1] != y.dims[1]) return "only H and W may be resized";
  if (node.attr_string("mode", "nearest") != "linear") return "only mode 'linear' (bilinear)";
  // CLML samples at the ratio of the sizes; ONNX at the given scales, which may differ.
  const int32_t scales = node.opset() < 11 ? 1 : 2;
  if (node.num_inputs() > scales && node.has_input(scales) && numel_of(node.input(scales)) == 4) {
    const tsr_tensor& s = node.input(scales);
    if (!s.data || s.dtype != TSR_DTYPE_FLOAT32) return "scales must be a constant";
    const float* f = static_cast<const float*>(s.data);
    for (int d = 2; d < 4; ++d) {
      if (static_cast<double>(f[d]) * static_cast<double>(x.dims[d]) !=
          static_cast<double>(y.dims[d])) {
        return "scales that are not the ratio of the output and input sizes";
      }
    }
  }
  if (node.attr_int("antialias", 0) != 0) return "antialias is not supported";
  const std::string ct = node.attr_string("coordinate_transformation_mode", "half_pixel");
  if (ct == "pytorch_half_pixel" && (y.dims[2] == 1 || y.dims[3] == 1)) {
    return "pytorch_half_pixel with an output dim of 1";
  }
  if (ct != "half_pixel" && ct != "pytorch_half_pixel" && ct != "align_corners" &&
      ct != "asymmetric") {
    return "coordinate_transformation_mode '" + ct + "' is not supported";
  }
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const std::string ct = node.opset() < 11
                             ? "asymmetric"
                             : node.attr_string("coordinate_transformation_mode", "half_pixel");
  cl_ml_op_resize_bilinear_desc_qcom desc{};
  desc.align_corners = ct == "align_corners" ? CL_TRUE : CL_FALSE;
  desc.half_pixel_centers = ct == "half_pixel" || ct == "pytorch_half_pixel" ? CL_TRUE : CL_FALSE;
  desc.arithmetic_mode = lw.mode();
  cl_ml_tensor_qcom in = lw.input(node.input_id(0));
  cl_ml_tensor_qcom out = lw.output(node.output_id(0));
  cl_ml_op_qcom op = nullptr;
  const cl_int err = lw.api().create_resize_bilinear(lw.context(), nullptr, &desc, in, out, &op,
                                                     lw.tuning_cache());
  lw.add_op(index, err, op, "clCreateMLOpResizeBilinearQCOM",
            json_attr("coordinate_transformation_mode", ct));
}

}  // namespace
TESSERA_CLML_OP("Resize", check, lower);
}  // namespace tessera::clml
