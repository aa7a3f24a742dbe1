// LayerNormalization on the adreno plugin: normalises contiguous rows (the axes from `axis` to
// the last) of an NCHW buffer, one work-item per row (plugins/opencl/kernels/layer_norm.cl,
// shared with mali); the channels-last rows do not fit the texture layout's channel blocks.
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device&) {
  const std::string r = check_float_io(node);
  if (!r.empty()) return r;
  return opencl::support::check_layer_norm(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const int64_t rows = opencl::support::layer_norm_rows(node).first;
  const Config config = lw.config_for("layer_norm.rows", rows);
  opencl::Kernel k = lw.kernel(config);
  opencl::support::bind_layer_norm(
      k, lw.input_buffer(node.input_id(0), index), lw.input_buffer(node.input_id(1), index),
      node.has_input(2) ? lw.input_buffer(node.input_id(2), index) : nullptr,
      lw.output_buffer(node.output_id(0), index), node);
  lw.add_step(index, std::move(k), {static_cast<size_t>(std::max<int64_t>(rows, 1))}, config);
}

}  // namespace
TESSERA_ADRENO_OP("LayerNormalization", check, lower);
}  // namespace tessera::adreno
