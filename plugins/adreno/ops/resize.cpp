// Resize in mode "linear" (bilinear over H and W, rank 4) on the adreno plugin: four texel reads
// per output texel, weights computed in float (not the sampler's linear filter, whose weights
// have only a few bits on most GPUs). Coordinate modes: tessera_opencl/op_registry.hpp.
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device& device) {
  const std::string r = opencl::support::check_resize_bilinear(node);
  if (!r.empty()) return r;
  const std::string in = check_fits_image(node.input(0), device.limits);
  if (!in.empty()) return "input 0: " + in;
  const std::string out = check_fits_image(node.output(0), device.limits);
  return out.empty() ? "" : "output 0: " + out;
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const auto in = blocked_dims(node.input(0), node);
  const tsr_tensor& y = node.output(0);
  const auto range = texel_range(y);
  const Config config = lw.config_for("resize.image.bilinear", range[0]);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.image(node.input_index(0)))
      .buffer(lw.image(node.output_index(0)))
      .i32x4(in[0], in[1], in[2], in[3])
      .i32(to_i32(y.dims[2], node))
      .i32(to_i32(y.dims[3], node))
      .i32(opencl::support::resize_coordinate_mode(node));
  lw.add_step(index, std::move(k), range, config);
}

}  // namespace
TESSERA_ADRENO_OP("Resize", check, lower);
}  // namespace tessera::adreno
