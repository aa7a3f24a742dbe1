// Resize in mode "linear" (bilinear over H and W of a rank-4 tensor) on the mali plugin, in NCHW
// (the segmentation heads' upsampling): one work-item per output element. Coordinate modes and
// the checks are shared with the other OpenCL plugins (tessera_opencl/op_registry.hpp).
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device&) {
  const std::string r = opencl::support::check_resize_bilinear(node);
  if (!r.empty()) return r;
  if (plugin::tensor_numel(node.output(0)) > INT_MAX) {
    return "more elements than 32-bit kernel indexing";
  }
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const tsr_tensor& y = node.output(0);
  const int64_t n = plugin::tensor_numel(y);
  const Config config = lw.config_for("resize.bilinear", n);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.buffer(node.output_index(0)))
      .i32x4(to_i32(x.dims[0], node), to_i32(x.dims[1], node), to_i32(x.dims[2], node),
             to_i32(x.dims[3], node))
      .i32(to_i32(y.dims[2], node))
      .i32(to_i32(y.dims[3], node))
      .i32(opencl::support::resize_coordinate_mode(node));
  lw.add_1d_step(index, std::move(k), n, config);
}

}  // namespace
TESSERA_MALI_OP("Resize", check, lower);
}  // namespace tessera::mali
