// LayerNormalization: normalises the contiguous rows formed by the axes from
// `axis` to the last, a group of work-items per row on GPUs (one work-item per row elsewhere);
// Scale (and B when given) constants with one value per row element. The optional Mean and
// InvStdDev outputs are refused.
#include "tessera_opencl/op_helpers.hpp"

namespace tessera::opencl {
namespace {

std::string check(const NodeView& node, const Device& device) {
  const std::string r = check_float_io(node, device.flavor.name);
  if (!r.empty()) return r;
  return support::check_layer_norm(node);
}

std::vector<Config> options(const NodeView& node, const Device& device) {
  return support::layer_norm_options(
      node, device, [&](const char* id, int64_t dim0, const support::ConfigOverrides& o) {
        return device.config(id, dim0, o);
      });
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const int64_t rows = support::layer_norm_rows(node).first;
  const Config config = choose_config(lw, index, lw.forced(options(node, lw.op_device())));
  Kernel k = lw.kernel(config);
  KernelArgs args = k.args();
  support::bind_layer_norm(args, lw.buffer(node.input_index(0)), lw.buffer(node.input_index(1)),
                           node.has_input(2) ? lw.buffer(node.input_index(2)) : nullptr,
                           lw.buffer(node.output_index(0)), node);
  if (std::string(config.schedule->id) == "layer_norm.group") {
    const support::SplitLaunch l = support::layer_norm_group_launch(node, config);
    args.local(l.scratch_bytes);
    lw.add_step(index, std::move(k), l.global, l.local, config);
    return;
  }
  lw.add_1d_step(index, std::move(k), rows, config);
}

}  // namespace
TESSERA_OPENCL_OP("LayerNormalization", check, lower);
TESSERA_OPENCL_TUNABLE("LayerNormalization", options);
}  // namespace tessera::opencl
