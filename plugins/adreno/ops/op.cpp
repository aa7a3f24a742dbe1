// The op registry of the adreno plugin and the helpers op files share.
#include "ops/op.hpp"

#include <climits>
#include <map>

#include "tessera/error.hpp"

namespace tessera::adreno {

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
    if (t.dtype != TSR_DTYPE_FLOAT32) return what + " is not float32 (adreno runs float32 models)";
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
  if (node.num_outputs() < 1 || node.output_id(0) < 0) return "output 0 is missing";
  for (int32_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output_id(i) >= 0) return "optional output " + std::to_string(i) + " is not supported";
  }
  return check(node.output(0), "output 0");
}

std::string check_image_io(const NodeView& node, const Device& device, bool any_rank) {
  std::string r = check_float_io(node);
  if (!r.empty()) return r;
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i) || node.input(i).data) continue;
    r = check_fits_image(node.input(i), device.limits, !any_rank);
    if (!r.empty()) return "input " + std::to_string(i) + ": " + r;
  }
  r = check_fits_image(node.output(0), device.limits, !any_rank);
  return r.empty() ? "" : "output 0: " + r;
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

int32_t to_i32(int64_t v, const NodeView& node) {
  if (v < INT_MIN || v > INT_MAX) {
    throw Error(node.where() + ": size " + std::to_string(v) + " exceeds 32-bit kernel indexing");
  }
  return static_cast<int32_t>(v);
}

std::array<int32_t, 4> blocked_dims(const tsr_tensor& t, const NodeView& node) {
  return {to_i32(t.dims[0], node), to_i32((t.dims[1] + 3) / 4, node), to_i32(t.dims[2], node),
          to_i32(t.dims[3], node)};
}

std::vector<float> pad_channels(const std::vector<float>& v) {
  std::vector<float> out((v.size() + 3) / 4 * 4, 0.0f);
  std::copy(v.begin(), v.end(), out.begin());
  return out;
}

}  // namespace tessera::adreno
