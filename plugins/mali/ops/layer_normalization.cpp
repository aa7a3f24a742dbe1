// LayerNormalization on the mali plugin: normalises the contiguous rows formed by the axes from
// `axis` to the last, one work-item per row; Scale (and B when given) constants with one value per
// row element. The optional Mean and InvStdDev outputs are refused.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const opencl::DeviceInfo&) {
  const std::string r = check_float_io(node);
  if (!r.empty()) return r;
  return opencl::support::check_layer_norm(node);
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const int64_t rows = opencl::support::layer_norm_rows(node).first;
  const Config config = default_config("layer_norm.rows", lw.device(), rows);
  opencl::Kernel k = lw.kernel(config);
  opencl::support::bind_layer_norm(k, lw.buffer(node.input_id(0)).get(),
                                   lw.buffer(node.input_id(1)).get(),
                                   node.has_input(2) ? lw.buffer(node.input_id(2)).get() : nullptr,
                                   lw.buffer(node.output_id(0)).get(), node);
  add_1d_step(lw, index, std::move(k), rows, config);
}

}  // namespace
TESSERA_MALI_OP("LayerNormalization", check, lower);
}  // namespace tessera::mali
