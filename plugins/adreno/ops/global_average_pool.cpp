// GlobalAveragePool on the adreno plugin: one work-item per (4-channel block, batch); the
// (N, C, 1, 1) result is again a texture-layout image.
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device& device) {
  return check_image_io(node, device);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const auto in = blocked_dims(node.input(0), node);
  const Config config = lw.config_for("pool.image.global_avg", in[1]);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.image(node.input_index(0)))
      .buffer(lw.image(node.output_index(0)))
      .i32x4(in[0], in[1], in[2], in[3]);
  lw.add_step(index, std::move(k), {static_cast<size_t>(in[1]), static_cast<size_t>(in[0])},
              config);
}

}  // namespace
TESSERA_ADRENO_OP("GlobalAveragePool", check, lower);
}  // namespace tessera::adreno
