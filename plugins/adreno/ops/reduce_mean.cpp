// ReduceMean over both spatial axes of a rank-4 tensor on the adreno plugin (torch's dynamo
// exporter writes AdaptiveAvgPool2d(1) and x.mean((2, 3)) this way): with keepdims = 1 the
// (N, C, 1, 1) result is a texture like GlobalAveragePool's; with keepdims = 0 the [N, C] result
// is written as an NCHW buffer (a rank-2 value does not take the 4-D texture layout).
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device& device) {
  if (!node.has_input(0) || node.input(0).rank != 4) return "only rank-4 inputs";
  const std::string r = check_fits_image(node.input(0), device.limits);
  if (!r.empty()) return "input 0: " + r;
  if (node.input(0).dtype != TSR_DTYPE_FLOAT32 || node.output(0).dtype != TSR_DTYPE_FLOAT32) {
    return "not float32 (adreno runs float32 models)";
  }
  return opencl::support::check_mean_over_spatial_axes(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const auto in = blocked_dims(node.input(0), node);
  const bool keep = node.attr_int("keepdims", 1) != 0;
  const Config config =
      lw.config_for(keep ? "pool.image.global_avg" : "pool.image.global_avg_nchw", in[1]);
  opencl::Kernel k = lw.kernel(config);
  if (keep) {
    k.args()
        .buffer(lw.image(node.input_index(0)))
        .buffer(lw.image(node.output_index(0)))
        .i32x4(in[0], in[1], in[2], in[3]);
  } else {
    k.args()
        .buffer(lw.image(node.input_index(0)))
        .buffer(lw.buffer(node.output_index(0)))
        .i32x4(in[0], in[1], in[2], in[3])
        .i32(to_i32(node.input(0).dims[1], node));
  }
  lw.add_step(index, std::move(k), {static_cast<size_t>(in[1]), static_cast<size_t>(in[0])},
              config);
}

}  // namespace
TESSERA_ADRENO_OP("ReduceMean", check, lower);
}  // namespace tessera::adreno
