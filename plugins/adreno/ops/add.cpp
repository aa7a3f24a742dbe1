// Add on the adreno plugin: same-shape operands of rank <= 4 texel by texel; an operand broadcast
// over the other (a bias, a scalar) is read from an NCHW buffer with zero strides (shared.cpp).
#include <algorithm>

#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& y = node.output(0);
  if (y.rank > 4) {
    lower_binary(lw, node, index, BinaryOp::kAdd);
    return;
  }
  for (int32_t i = 0; i < 2; ++i) {
    const tsr_tensor& t = node.input(i);
    if (t.rank != y.rank || !std::equal(t.dims, t.dims + t.rank, y.dims)) {
      lower_binary(lw, node, index, BinaryOp::kAdd);
      return;
    }
  }
  const auto range = texel_range(node.output(0));
  const Config config = lw.config_for("eltwise.image.add", range[0]);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.image(node.input_index(0)))
      .buffer(lw.image(node.input_index(1)))
      .buffer(lw.image(node.output_index(0)))
      .i32x4(to_i32(range[0], node), to_i32(range[1], node), 0, 0);
  lw.add_step(index, std::move(k), range, config);
}

}  // namespace
TESSERA_ADRENO_OP("Add", check_binary, lower);
}  // namespace tessera::adreno
