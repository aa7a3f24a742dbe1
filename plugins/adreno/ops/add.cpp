// Add on the adreno plugin: same-shape operands of rank <= 4, texel by texel (no broadcasting: a
// broadcast operand would need its own layout; such nodes fall back).
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device& device) {
  if (node.num_inputs() != 2) return "expects 2 inputs";
  std::string r = check_image_io(node, device, /*any_rank=*/true);
  if (!r.empty()) return r;
  for (int32_t i = 0; i < 2; ++i) {
    const tsr_tensor& t = node.input(i);
    if (t.rank != node.output(0).rank ||
        !std::equal(t.dims, t.dims + t.rank, node.output(0).dims)) {
      return "only same-shape operands are supported (no broadcasting in the texture layout)";
    }
    if (t.data) {
      r = check_fits_image(t, device.limits, /*rank4_only=*/false);
      if (!r.empty()) return r;
    }
  }
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const auto range = texel_range(node.output(0));
  const Config config = lw.config_for("eltwise.image.add", range[0]);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.input_image(node.input_id(0), index))
      .buffer(lw.input_image(node.input_id(1), index))
      .buffer(lw.output_image(node.output_id(0), index))
      .i32x4(to_i32(range[0], node), to_i32(range[1], node), 0, 0);
  lw.add_step(index, std::move(k), range, config);
}

}  // namespace
TESSERA_ADRENO_OP("Add", check, lower);
}  // namespace tessera::adreno
