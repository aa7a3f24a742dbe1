// The op registry of the mali plugin and the helpers op files share.
#include "ops/op.hpp"

#include <climits>

namespace tessera::mali {

Config default_config(const std::string& schedule_id, const opencl::DeviceInfo& device,
                      int64_t work_dim0, const opencl::ConfigOverrides& overrides) {
  Config c;
  c.schedule = &schedule(schedule_id);
  auto value = [&](const Knob& k, int32_t v) {
    for (const auto& [name, given] : overrides) {
      if (std::string(name) == k.name) v = given;
    }
    return v;
  };
  // `vec` floats per work-item: dim 0 has that many times fewer items (add_1d_step).
  int32_t vec = 1;
  for (const Knob& k : c.schedule->knobs) {
    if (std::string(k.name) == "vec") vec = value(k, default_vec(*c.schedule));
  }
  for (const Knob& k : c.schedule->knobs) {
    int32_t v = k.candidates.front();
    if (std::string(k.name) == "wg_x")
      v = default_wg_x(*c.schedule, device, (work_dim0 + vec - 1) / vec);
    if (std::string(k.name) == "vec") v = vec;
    c.values.push_back(value(k, v));
  }
  return c;
}

StoragePlan nchw4c_if_rank4(const NodeView& node, const Lowering&) {
  if (node.input(0).rank != 4) return {};
  // Padding C up to whole blocks grows a buffer up to 4x (C = 1): keep 32-bit kernel indexing.
  for (const tsr_tensor* t : {&node.input(0), &node.output(0)}) {
    if (stored_numel(*t, Storage::kNchw4c) > INT_MAX / 2) return {};
  }
  return {Storage::kNchw4c, {0}};
}

bool writes_nchw4c(const Lowering& lowering, const NodeView& node) {
  return lowering.storage(node.output_index(0)) == Storage::kNchw4c;
}

Config elementwise_config(const Lowering& lowering, int32_t index, const char* schedule_id,
                          int64_t n) {
  const std::vector<Config> options = {lowering.config_for(schedule_id, n)};
  return choose_config(lowering, index, options);
}

const opencl::Flavor& flavor() {
  static const opencl::Flavor f{"mali", schedule, default_config};
  return f;
}

}  // namespace tessera::mali
