// Concat on the mali plugin: one block copy per input into its slice of the output. On axis 1 of
// rank-4 values whose channel counts are all multiples of 4, NCHW4c needs no padding, so the
// same copies (same element counts and offsets) concatenate whole channel blocks: such a Concat
// runs in NCHW4c when any input is NCHW4c.
#include "ops/shared.hpp"

namespace tessera::mali {
namespace {

std::string check(const NodeView& node, const Device&) {
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  if (!node.find_attribute("axis")) return "attribute 'axis' is required";
  return "";
}

StoragePlan layout(const NodeView& node, const Lowering& lw) {
  const tsr_tensor& y = node.output(0);
  const int64_t axis = node.attr_int("axis", 0);
  if (y.rank != 4 || (axis != 1 && axis != -3)) return {};
  StoragePlan plan{Storage::kNchw, {}};
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) continue;
    if (node.input(i).dims[1] % 4 != 0) return {};
    if (lw.storage(node.input_index(i)) == Storage::kNchw4c) plan.output = Storage::kNchw4c;
    plan.inputs.push_back(i);
  }
  return plan;
}

// One copy schedule; every input's copy runs with the node's config.
std::vector<Config> options(const NodeView& node, const Device& device) {
  return {device.config("copy.block", plugin::tensor_numel(node.output(0)))};
}

void lower(Lowering& lw, const NodeView& node, int32_t index) {
  const tsr_tensor& y = node.output(0);
  int64_t axis = node.attr_int("axis", 0);
  if (axis < 0) axis += y.rank;
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= y.dims[d];
  const int64_t dst_inner = outer == 0 ? 0 : plugin::tensor_numel(y) / outer;
  int64_t offset = 0;
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) continue;
    const int64_t n = plugin::tensor_numel(node.input(i));
    const int64_t src_inner = outer == 0 ? 0 : n / outer;
    if (n > 0) {
      const Config config = elementwise_config(lw, index, "copy.block", n);
      opencl::Kernel k = lw.kernel(config);
      k.args()
          .buffer(lw.buffer(node.input_index(i)))
          .buffer(lw.buffer(node.output_index(0)))
          .i32(to_i32(outer, node))
          .i32(to_i32(src_inner, node))
          .i32(to_i32(dst_inner, node))
          .i32(to_i32(offset, node));
      lw.add_1d_step(index, std::move(k), n, config);
    }
    offset += src_inner;
  }
}

}  // namespace
TESSERA_MALI_OP_WITH_LAYOUT("Concat", check, lower, layout);
TESSERA_MALI_TUNABLE("Concat", options);
}  // namespace tessera::mali
