// Pad with constant pads: constant, reflect and edge modes, rank up to 6 (shaders/pad.comp).
// Negative pads (crops) are left to other plugins.
#include "ops/op.hpp"

namespace tessera::vulkan {
namespace {

std::vector<int64_t> pads_of(const NodeView& node) {
  return node.num_inputs() > 1 ? constant_ints(node, 1, {}) : node.attr_ints("pads", {});
}

std::string check(const NodeView& node) {
  const std::string f = float_only(node);
  if (!f.empty()) return f;
  const int32_t rank = node.input(0)->rank;
  if (rank > 6) return "rank above 6";
  const std::string mode = node.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") return "mode '" + mode + "'";
  if (node.input(1) != nullptr && node.input(1)->data == nullptr) return "non-constant pads";
  if (node.input(2) != nullptr &&
      (node.input(2)->data == nullptr || node.input(2)->dtype != TSR_DTYPE_FLOAT32)) {
    return "a non-constant pad value";
  }
  if (node.input(3) != nullptr) return "the axes input";
  const std::vector<int64_t> pads = pads_of(node);
  if (pads.size() != static_cast<size_t>(2 * rank)) return "pads of the wrong length";
  for (int64_t p : pads) {
    if (p < 0) return "negative pads";
  }
  return "";
}

void lower(Lowering& lowering, const NodeView& node) {
  const tsr_tensor& x = *node.input(0);
  const tsr_tensor& y = *node.output(0);
  const std::vector<int64_t> pads = pads_of(node);
  const std::string mode = node.attr_string("mode", "constant");
  float value = node.attr_float("value", 0.0f);
  if (node.input(2) != nullptr) value = *static_cast<const float*>(node.input(2)->data);
  std::vector<int32_t> out(6, 1), in(6, 1), begin(6, 0);
  const int32_t shift = 6 - x.rank;
  for (int32_t i = 0; i < x.rank; ++i) {
    out[static_cast<size_t>(shift + i)] = narrow(y.dims[i], node, "a shape");
    in[static_cast<size_t>(shift + i)] = narrow(x.dims[i], node, "a shape");
    begin[static_cast<size_t>(shift + i)] = narrow(pads[static_cast<size_t>(i)], node, "a pad");
  }
  std::vector<int32_t> c = {mode == "constant" ? 0 : mode == "reflect" ? 1 : 2, float_bits(value)};
  for (const auto& v : {out, in, begin}) c.insert(c.end(), v.begin(), v.end());
  lowering.dispatch(node, linear_kernel("pad", plugin::tensor_numel(y), 64, std::move(c)),
                    {&lowering.buffer(node.input_index(0))},
                    {&lowering.buffer(node.output_index(0))});
}

}  // namespace

TESSERA_VULKAN_OP(Pad, check, lower);

}  // namespace tessera::vulkan
