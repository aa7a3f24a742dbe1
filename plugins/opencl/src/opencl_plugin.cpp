// Definitions of the non-template helpers of the OpenCL plugins' shared plugin class, declared in
// tessera_opencl/opencl_plugin.hpp.
#include "tessera_opencl/opencl_plugin.hpp"

#include <algorithm>
#include <cstdio>

namespace tessera::opencl::support {

std::string selector_reason(const DeviceInfo& d, size_t index, const std::string& selector,
                            bool native, const char* not_native) {
  if (selector.empty() || selector == "default") return native ? "" : not_native;
  if (selector == "any" || selector == d.stable_id) return "";
  if (std::all_of(selector.begin(), selector.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    // Compared as text without leading zeros: no integer parse to overflow on a long selector.
    const size_t first = std::min(selector.find_first_not_of('0'), selector.size() - 1);
    if (selector.substr(first) == std::to_string(index)) return "";
    return "device index " + std::to_string(index) + " is not the selector's index " +
           selector.substr(first);
  }
  if (!contains_ci(d.name, selector)) {
    return "device name does not contain the selector '" + selector + "'";
  }
  return "";
}

void write_reason(tsr_support* support, const std::string& text) {
  std::snprintf(support->reason, sizeof(support->reason), "%s", text.c_str());
}

std::map<int32_t, RequestedConfig> requested_configs(
    const std::vector<plugin::NodeConfig>& configs) {
  std::map<int32_t, RequestedConfig> out;
  for (const plugin::NodeConfig& c : configs) {
    if (c.schedule.empty()) continue;
    RequestedConfig r;
    r.schedule = c.schedule;
    for (const plugin::KnobValue& k : c.knobs) r.knobs.emplace_back(k.name, k.value);
    out[c.node] = std::move(r);
  }
  return out;
}

}  // namespace tessera::opencl::support
