// LayerNormalization on the adreno plugin: normalises contiguous rows (the axes from `axis` to
// the last) of an NCHW buffer, a group of work-items per row on GPUs and one work-item per row on
// CPU devices (plugins/opencl/kernels/layer_norm.cl, shared with mali); the channels-last rows do
// not fit the texture layout's channel blocks.
#include "ops/shared.hpp"

namespace tessera::adreno {
namespace {

std::string check(const NodeView& node, const Device&) {
  const std::string r = check_float_io(node);
  if (!r.empty()) return r;
  return opencl::support::check_layer_norm(node);
}

std::vector<Config> options(const NodeView& node, const Device& device) {
  return opencl::support::layer_norm_options(
      node, device.info,
      [&](const char* id, int64_t dim0, const opencl::support::ConfigOverrides& o) {
        return device.config(id, dim0, o);
      });
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const int64_t rows = opencl::support::layer_norm_rows(node).first;
  const Config config = choose_config(lw, index, lw.forced(options(node, lw.op_device())));
  opencl::Kernel k = lw.kernel(config);
  opencl::KernelArgs args = k.args();
  opencl::support::bind_layer_norm(
      args, lw.buffer(node.input_index(0)),
      lw.buffer(node.input_index(1)),
      node.has_input(2) ? lw.buffer(node.input_index(2)) : nullptr,
      lw.buffer(node.output_index(0)), node);
  if (std::string(config.schedule->id) == "layer_norm.group") {
    const opencl::support::SplitLaunch l = opencl::support::layer_norm_group_launch(node, config);
    args.local(l.scratch_bytes);
    lw.add_step(index, std::move(k), l.global, l.local, config);
    return;
  }
  lw.add_step(index, std::move(k), {static_cast<size_t>(std::max<int64_t>(rows, 1))}, config);
}

}  // namespace
TESSERA_ADRENO_OP("LayerNormalization", check, lower);
static const TuningRegistrar kLayerNormTuning("LayerNormalization", options);
}  // namespace tessera::adreno
