// The op registry of the mali plugin and the helpers op files share.
#include "ops/op.hpp"

#include <climits>
#include <map>

#include "tessera/error.hpp"

namespace tessera::mali {

namespace {
std::map<std::string, OpLowering>& registry() {
  static std::map<std::string, OpLowering> ops;
  return ops;
}
std::map<std::string, TuningOptionsFn>& tuning_registry() {
  static std::map<std::string, TuningOptionsFn> fns;
  return fns;
}
}  // namespace

TuningRegistrar::TuningRegistrar(const char* op_type, TuningOptionsFn fn) {
  tuning_registry()[op_type] = fn;
}

TuningOptionsFn find_tuning(const std::string& op_type) {
  auto it = tuning_registry().find(op_type);
  return it == tuning_registry().end() ? nullptr : it->second;
}

Config choose_config(const Lowering& lowering, int32_t index, const std::vector<Config>& options) {
  auto it = lowering.requests.find(index);
  if (it != lowering.requests.end()) {
    if (auto c = opencl::support::apply_request(&it->second, options)) return *c;
  }
  return options.front();
}

OpLoweringRegistrar::OpLoweringRegistrar(const OpLowering& op) {
  registry()[op.op_type] = op;
}

const OpLowering* find_lowering(const std::string& op_type) {
  auto it = registry().find(op_type);
  return it == registry().end() ? nullptr : &it->second;
}

std::string check_float_io(const NodeView& node) {
  auto check = [&](const tsr_tensor& t, const std::string& what) -> std::string {
    if (t.dtype != TSR_DTYPE_FLOAT32) return what + " is not float32 (mali runs float32 only)";
    if (t.rank < 0 || t.rank > TESSERA_MAX_RANK) return what + " has an unknown rank";
    for (int32_t d = 0; d < t.rank; ++d) {
      if (t.dims[d] < 0) return what + " has an unknown dim";
    }
    if (numel_of(t) > INT_MAX / 2) return what + " is too large for 32-bit kernel indexing";
    return "";
  };
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) continue;
    const std::string r = check(node.input(i), "input " + std::to_string(i));
    if (!r.empty()) return r;
  }
  for (int32_t i = 0; i < node.num_outputs(); ++i) {
    if (node.output_id(i) < 0) continue;
    if (i > 0) return "optional output " + std::to_string(i) + " is not supported";
    const std::string r = check(node.output(i), "output " + std::to_string(i));
    if (!r.empty()) return r;
  }
  return "";
}

std::string check_constant(const NodeView& node, int32_t i, const char* what) {
  if (!node.has_input(i)) return std::string(what) + " (input " + std::to_string(i) + ") missing";
  if (!node.input(i).data) {
    return std::string(what) + " (input " + std::to_string(i) + ") must be a constant";
  }
  return "";
}

const float* constant_floats(const NodeView& node, int32_t i) {
  return static_cast<const float*>(node.input(i).data);
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

void add_1d_step(Lowering& lowering, int32_t node, opencl::Kernel kernel, int64_t n,
                 const Config& config) {
  lowering.add_step(node, std::move(kernel), {static_cast<size_t>(n)},
                    {static_cast<size_t>(config.get("wg_x"))}, config);
}

int32_t to_i32(int64_t v, const NodeView& node) {
  if (v < INT_MIN || v > INT_MAX) {
    throw Error(node.where() + ": size " + std::to_string(v) + " exceeds 32-bit kernel indexing");
  }
  return static_cast<int32_t>(v);
}

}  // namespace tessera::mali
