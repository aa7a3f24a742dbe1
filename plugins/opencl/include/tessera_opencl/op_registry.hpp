// Header-only op-registry pieces shared by the OpenCL plugins' ops/op.cpp: the per-plugin tables
// from op type to lowering / tuning function (filled by static registrars in the op files),
// choosing the requested config, and the checks and conversions every op file uses. Each plugin
// keeps its own types (OpLowering, Config, Lowering) and instantiates these with them.
#pragma once

#include <climits>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessera/error.hpp"
#include "tessera_opencl/plugin_support.hpp"

namespace tessera::opencl::support {

// A table from op type to T, one per (T, Tag) for the whole process; a function-local static so
// registrars in other translation units may fill it during static initialisation.
template <class T, class Tag>
std::map<std::string, T>& op_table() {
  static std::map<std::string, T> table;
  return table;
}

// The entry of `op_type` in op_table<T, Tag>(), or nullptr.
template <class T, class Tag>
const T* find_in_op_table(const std::string& op_type) {
  const auto& table = op_table<T, Tag>();
  auto it = table.find(op_type);
  return it == table.end() ? nullptr : &it->second;
}

// The config core requested for node `index` if it is one of `options` with valid knob values,
// else options[0] (the heuristic's).
template <class LoweringT, class ConfigT>
ConfigT choose_requested_config(const LoweringT& lowering, int32_t index,
                                const std::vector<ConfigT>& options) {
  auto it = lowering.requests.find(index);
  if (it != lowering.requests.end()) {
    if (auto c = apply_request(&it->second, options)) return *c;
  }
  return options.front();
}

// "" when `t` (called `what`) is float32 with a known shape small enough for 32-bit kernel
// indexing; else the reason. `float_only` ends the not-float32 reason, e.g. "(mali runs ...)".
inline std::string check_float_tensor(const tsr_tensor& t, const std::string& what,
                                      const char* float_only) {
  if (t.dtype != TSR_DTYPE_FLOAT32) return what + " is not float32 " + float_only;
  if (t.rank < 0 || t.rank > TESSERA_MAX_RANK) return what + " has an unknown rank";
  for (int32_t d = 0; d < t.rank; ++d) {
    if (t.dims[d] < 0) return what + " has an unknown dim";
  }
  if (numel_of(t) > INT_MAX / 2) return what + " is too large for 32-bit kernel indexing";
  return "";
}

// "" when every present input of `node` passes check_float_tensor; else the first reason.
inline std::string check_float_inputs(const NodeView& node, const char* float_only) {
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) continue;
    const std::string r =
        check_float_tensor(node.input(i), "input " + std::to_string(i), float_only);
    if (!r.empty()) return r;
  }
  return "";
}

// "" when input i is present and has constant data; else the reason.
inline std::string check_constant(const NodeView& node, int32_t i, const char* what) {
  if (!node.has_input(i)) return std::string(what) + " (input " + std::to_string(i) + ") missing";
  if (!node.input(i).data) {
    return std::string(what) + " (input " + std::to_string(i) + ") must be a constant";
  }
  return "";
}

// The constant float data of input i (check_constant must have passed).
inline const float* constant_floats(const NodeView& node, int32_t i) {
  return static_cast<const float*>(node.input(i).data);
}

// `v` as int32; throws tessera::Error naming the node when it does not fit.
inline int32_t to_i32(int64_t v, const NodeView& node) {
  if (v < INT_MIN || v > INT_MAX) {
    throw Error(node.where() + ": size " + std::to_string(v) + " exceeds 32-bit kernel indexing");
  }
  return static_cast<int32_t>(v);
}

}  // namespace tessera::opencl::support
