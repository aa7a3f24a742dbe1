// BatchNormalization (inference) on the mali plugin: folded on the host into a per-channel
// scale and shift, y = x * scale[c] + shift[c]. Follows its input's layout; in NCHW4c the scale
// and shift are zero padded to whole blocks.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device&) {
  if (node.num_inputs() != 5) return "expects 5 inputs (X, scale, B, mean, var)";
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  if (node.input(0).rank < 2) return "input must have a channel dim";
  return opencl::support::check_batch_norm_params(node);
}

// The schedules describe_node lists: the default layout's first (under nchw4c the NCHW one runs
// when the input arrives as NCHW).
std::vector<Config> options(const NodeView& node, const Device& device) {
  const int64_t n = plugin::tensor_numel(node.output(0));
  std::vector<Config> out = {device.config("eltwise.channel_affine", n)};
  if (kDefaultLayout == Storage::kNchw4c && node.input(0).rank == 4) {
    out.insert(out.begin(), device.config("eltwise.channel_affine.nchw4c", n));
  }
  return out;
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& x = node.input(0);
  int64_t inner = 1;
  for (int32_t d = 2; d < x.rank; ++d) inner *= x.dims[d];
  std::vector<float> a, b;
  opencl::support::fold_batch_norm(node, a, b);
  // NCHW4c: channels count blocks, n the padded buffer's floats.
  const bool c4 = writes_nchw4c(lw, node);
  const int64_t channels = c4 ? (x.dims[1] + 3) / 4 : x.dims[1];
  if (c4) {
    a.resize(static_cast<size_t>(channels * 4), 0.0f);
    b.resize(static_cast<size_t>(channels * 4), 0.0f);
  }
  const int64_t n = stored_numel(x, c4 ? Storage::kNchw4c : Storage::kNchw);
  const Config config = elementwise_config(
      lw, index, c4 ? "eltwise.channel_affine.nchw4c" : "eltwise.channel_affine", n);
  opencl::Kernel k = lw.kernel(config);
  k.args()
      .buffer(lw.buffer(node.input_index(0)))
      .buffer(lw.constant_buffer(a))
      .buffer(lw.constant_buffer(b))
      .buffer(lw.buffer(node.output_index(0)))
      .i32(to_i32(n, node))
      .i32(to_i32(channels, node))
      .i32(to_i32(inner, node));
  lw.add_1d_step(index, std::move(k), n, config);
}

}  // namespace
TESSERA_MALI_OP_WITH_LAYOUT("BatchNormalization", check, lower, follow_input0);
TESSERA_MALI_TUNABLE("BatchNormalization", options);
}  // namespace tessera::mali
