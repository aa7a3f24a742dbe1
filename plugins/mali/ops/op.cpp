// The op registry of the mali plugin and the helpers op files share.
#include "ops/op.hpp"

#include <climits>

namespace tessera::mali {

std::string check_float_io(const NodeView& node) {
  const char* const float_only = "(mali runs float32 only)";
  const std::string r = opencl::support::check_float_inputs(node, float_only);
  if (!r.empty()) return r;
  for (int32_t i = 0; i < node.num_outputs(); ++i) {
    if (node.output_index(i) < 0) continue;
    if (i > 0) return "optional output " + std::to_string(i) + " is not supported";
    const std::string o = opencl::support::check_float_tensor(
        node.output(i), "output " + std::to_string(i), float_only);
    if (!o.empty()) return o;
  }
  return "";
}

std::string check_float_data_io(const NodeView& node) {
  if (!node.has_input(0) || node.input(0).dtype != TSR_DTYPE_FLOAT32) {
    return "input 0 is not float32 (mali runs float32 only)";
  }
  for (int32_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output_index(i) >= 0) {
      return "optional output " + std::to_string(i) + " is not supported";
    }
  }
  if (node.output_index(0) < 0 || node.output(0).dtype != TSR_DTYPE_FLOAT32) {
    return "output 0 is not float32";
  }
  return "";
}

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

StoragePlan follow_input0(const NodeView& node, const Lowering& lowering) {
  if (node.input(0).rank != 4 || lowering.storage(node.input_index(0)) != Storage::kNchw4c) return {};
  return {Storage::kNchw4c, {0}};
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
