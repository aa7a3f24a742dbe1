// The op registry of the mali plugin and the helpers op files share.
#include "ops/op.hpp"

#include <climits>

namespace tessera::mali {

std::string check_float_io(const NodeView& node) {
  const char* const float_only = "(mali runs float32 only)";
  const std::string r = opencl::support::check_float_inputs(node, float_only);
  if (!r.empty()) return r;
  for (int32_t i = 0; i < node.num_outputs(); ++i) {
    if (node.output_id(i) < 0) continue;
    if (i > 0) return "optional output " + std::to_string(i) + " is not supported";
    const std::string o = opencl::support::check_float_tensor(
        node.output(i), "output " + std::to_string(i), float_only);
    if (!o.empty()) return o;
  }
  return "";
}

Config default_config(const std::string& schedule_id, const opencl::DeviceInfo& device,
                      int64_t work_dim0,
                      const std::vector<std::pair<const char*, int32_t>>& overrides) {
  Config c;
  c.schedule = &schedule(schedule_id);
  for (const Knob& k : c.schedule->knobs) {
    int32_t v = k.candidates.front();
    if (std::string(k.name) == "wg_x") v = default_wg_x(*c.schedule, device, work_dim0);
    for (const auto& [name, value] : overrides) {
      if (std::string(name) == k.name) v = value;
    }
    c.values.push_back(v);
  }
  return c;
}

LayoutPlan follow_input0(const NodeView& node, const Lowering& lowering) {
  if (node.input(0).rank != 4 || lowering.layout(node.input_id(0)) != Layout::kNchw4c) return {};
  return {Layout::kNchw4c, {0}};
}

LayoutPlan nchw4c_if_rank4(const NodeView& node, const Lowering&) {
  if (node.input(0).rank != 4) return {};
  // Padding C up to whole blocks grows a buffer up to 4x (C = 1): keep 32-bit kernel indexing.
  for (const tsr_tensor* t : {&node.input(0), &node.output(0)}) {
    if (stored_numel(*t, Layout::kNchw4c) > INT_MAX / 2) return {};
  }
  return {Layout::kNchw4c, {0}};
}

bool writes_nchw4c(const Lowering& lowering, const NodeView& node) {
  return lowering.layout(node.output_id(0)) == Layout::kNchw4c;
}

void add_1d_step(Lowering& lowering, int32_t node, opencl::Kernel kernel, int64_t n,
                 const Config& config) {
  lowering.add_step(node, std::move(kernel), {static_cast<size_t>(n)},
                    {static_cast<size_t>(config.get("wg_x"))}, config);
}

}  // namespace tessera::mali
