// LayerNormalization on the mali plugin: normalises the contiguous rows formed by the axes from
// `axis` to the last, one work-item per row; Scale (and B when given) constants with one value per
// row element. The optional Mean and InvStdDev outputs are refused.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

// Elements per normalised row.
int64_t row_size(const NodeView& node) {
  int64_t cols = 1;
  for (int64_t d = normalized_axis(node, -1); d < node.input(0).rank; ++d) {
    cols *= node.input(0).dims[d];
  }
  return cols;
}

std::string check(const NodeView& node, const opencl::DeviceInfo&) {
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  const int64_t rank = node.input(0).rank;
  const int64_t axis = normalized_axis(node, -1);
  if (rank == 0 || axis < 0 || axis >= rank) return "axis out of range";
  if (node.attr_int("stash_type", 1) != 1) return "only stash_type 1 (float) is implemented";
  r = check_constant(node, 1, "scale");
  if (!r.empty()) return r;
  const int64_t cols = row_size(node);
  if (numel_of(node.input(1)) != cols) return "scale must hold one value per row element";
  if (node.has_input(2)) {
    r = check_constant(node, 2, "bias");
    if (!r.empty()) return r;
    if (numel_of(node.input(2)) != cols) return "bias must hold one value per row element";
  }
  return "";
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  const int64_t cols = row_size(node);
  const int64_t rows = cols == 0 ? 0 : numel_of(x) / cols;
  const bool has_bias = node.has_input(2);
  const Config config = default_config("layer_norm.rows", lw.device(), rows);
  opencl::Kernel k = lw.kernel(config);
  const opencl::Buffer& scale = lw.buffer(node.input_id(1));
  k.args()
      .buffer(lw.buffer(node.input_id(0)))
      .buffer(scale)
      .buffer(has_bias ? lw.buffer(node.input_id(2)) : scale)
      .buffer(lw.buffer(node.output_id(0)))
      .i32(to_i32(rows, node))
      .i32(to_i32(cols, node))
      .f32(node.attr_float("epsilon", 1e-5f))
      .i32(has_bias ? 1 : 0);
  add_1d_step(lw, index, std::move(k), rows, config);
}

}  // namespace
TESSERA_MALI_OP("LayerNormalization", check, lower);
}  // namespace tessera::mali
