// Resize in mode "linear" over H and W of a rank-4 tensor on CLML's bilinear resize op:
// coordinate_transformation_mode half_pixel / pytorch_half_pixel (half-pixel centres),
// align_corners, or asymmetric. Nearest and cubic fall back to the next target.
#include "ops/op.hpp"

namespace tessera::clml {
namespace {

std::string check(const NodeView& node, const Device& device) {
  if (const std::string r = needs(reinterpret_cast<const void*>(device.api->create_resize_bilinear),
                                  "clCreateMLOpResizeBilinearQCOM");
      !r.empty()) {
    return r;
  }
  return opencl::support::check_resize_bilinear(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const int32_t mode = opencl::support::resize_coordinate_mode(node);
  cl_ml_op_resize_bilinear_desc_qcom desc{};
  desc.align_corners = mode == 2 ? CL_TRUE : CL_FALSE;
  desc.half_pixel_centers = mode == 1 ? CL_TRUE : CL_FALSE;
  desc.arithmetic_mode = lw.mode();
  cl_ml_tensor_qcom in = lw.input(node.input_index(0));
  cl_ml_tensor_qcom out = lw.output(node.output_index(0));
  cl_ml_op_qcom op = nullptr;
  const cl_int err = lw.api().create_resize_bilinear(lw.context(), nullptr, &desc, in, out, &op,
                                                     lw.tuning_cache());
  lw.add_op(index, err, op, "clCreateMLOpResizeBilinearQCOM",
            json_attr("coordinate_mode", static_cast<int64_t>(mode)));
}

}  // namespace
TESSERA_CLML_OP("Resize", check, lower);
}  // namespace tessera::clml
