// Header-only helpers shared by the OpenCL plugins (written for adreno; mali may switch to them):
// typed read access to one node of a tsr_region (NodeView), shape helpers, 2-D window padding,
// schedules with knob spaces described as data, and small string helpers for device claims.
// Header-only so plugins pick it up without new link dependencies.
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/plugin_abi.h"
#include "tessera_opencl/runtime.hpp"

namespace tessera::opencl::support {

class NodeView {
 public:
  NodeView(const tsr_region& region, int32_t index)
      : region_(&region), node_(&region.nodes[index]) {}

  const tsr_region& region() const { return *region_; }
  std::string op_type() const { return node_->op_type ? node_->op_type : ""; }
  std::string name() const { return node_->name ? node_->name : ""; }
  int64_t opset() const { return region_->opset; }
  // "node 'conv1' (Conv)" for messages.
  std::string where() const { return "node '" + name() + "' (" + op_type() + ")"; }

  int32_t num_inputs() const { return node_->num_inputs; }
  int32_t num_outputs() const { return node_->num_outputs; }
  bool has_input(int32_t i) const { return i < node_->num_inputs && node_->inputs[i] >= 0; }
  int32_t input_id(int32_t i) const { return node_->inputs[i]; }
  int32_t output_id(int32_t i) const { return node_->outputs[i]; }
  const tsr_tensor& input(int32_t i) const { return region_->values[node_->inputs[i]]; }
  const tsr_tensor& output(int32_t i) const { return region_->values[node_->outputs[i]]; }

  const tsr_attribute* attr(const char* name) const {
    for (int32_t i = 0; i < node_->num_attributes; ++i) {
      const tsr_attribute& a = node_->attributes[i];
      if (a.name && std::strcmp(a.name, name) == 0) return &a;
    }
    return nullptr;
  }
  int64_t attr_int(const char* name, int64_t fallback) const {
    const tsr_attribute* a = attr(name);
    if (!a) return fallback;
    if (a->kind != TSR_ATTR_INT) throw Error(where() + ": attribute '" + name + "' is not an int");
    return a->i;
  }
  float attr_float(const char* name, float fallback) const {
    const tsr_attribute* a = attr(name);
    if (!a) return fallback;
    if (a->kind != TSR_ATTR_FLOAT) {
      throw Error(where() + ": attribute '" + name + "' is not a float");
    }
    return a->f;
  }
  std::string attr_string(const char* name, const std::string& fallback) const {
    const tsr_attribute* a = attr(name);
    if (!a) return fallback;
    if (a->kind != TSR_ATTR_STRING || !a->s) {
      throw Error(where() + ": attribute '" + name + "' is not a string");
    }
    return a->s;
  }
  std::vector<int64_t> attr_ints(const char* name, const std::vector<int64_t>& fallback) const {
    const tsr_attribute* a = attr(name);
    if (!a) return fallback;
    if (a->kind != TSR_ATTR_INTS) throw Error(where() + ": attribute '" + name + "' is not ints");
    return std::vector<int64_t>(a->ints, a->ints + a->count);
  }

 private:
  const tsr_region* region_;
  const tsr_node* node_;
};

inline int64_t numel_of(const tsr_tensor& t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t.rank; ++i) n *= t.dims[i];
  return n;
}

inline bool contains_ci(const std::string& hay, const std::string& needle) {
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  return lower(hay).find(lower(needle)) != std::string::npos;
}

inline void write_message(tsr_message message, const std::string& text) {
  if (!message.text || message.capacity == 0) return;
  std::snprintf(message.text, message.capacity, "%s", text.c_str());
}

// Pads (top, left, bottom, right) of a 2-D window from auto_pad / pads and the known output size.
inline std::array<int64_t, 4> window_pads_2d(const NodeView& node, const std::array<int64_t, 2>& in,
                                             const std::array<int64_t, 2>& out,
                                             const std::array<int64_t, 2>& kernel,
                                             const std::array<int64_t, 2>& strides,
                                             const std::array<int64_t, 2>& dilations) {
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    const std::vector<int64_t> pads = node.attr_ints("pads", {0, 0, 0, 0});
    if (pads.size() != 4) throw Error(node.where() + ": attribute 'pads' must have 4 values");
    return {pads[0], pads[1], pads[2], pads[3]};
  }
  std::array<int64_t, 4> p = {0, 0, 0, 0};
  if (auto_pad == "VALID") return p;
  for (int d = 0; d < 2; ++d) {
    const int64_t total = std::max<int64_t>(
        0, (out[d] - 1) * strides[d] + (kernel[d] - 1) * dilations[d] + 1 - in[d]);
    const int64_t begin = auto_pad == "SAME_LOWER" ? total - total / 2 : total / 2;
    p[d] = begin;
    p[d + 2] = total - begin;
  }
  return p;
}

// ---- schedules: kernel variants with knob spaces, described once as data ----

struct Knob {
  const char* name;
  std::vector<int32_t> candidates;
  bool build_time;  // a -D define: a new value means a new program build
};

struct Schedule {
  const char* id;           // "conv2d.image.direct"
  const char* kernel_file;  // kernels/<file>
  const char* kernel_name;  // entry point
  std::vector<Knob> knobs;
};

// One choice of knob values, in the schedule's knob order.
struct Config {
  const Schedule* schedule = nullptr;
  std::vector<int32_t> values;

  int32_t get(const std::string& knob) const {
    for (size_t i = 0; i < schedule->knobs.size() && i < values.size(); ++i) {
      if (knob == schedule->knobs[i].name) return values[i];
    }
    throw Error(std::string("schedule '") + schedule->id + "' has no knob '" + knob + "'");
  }
  // "conv2d.image.direct{wg_x=16,outputs_per_item=4}"
  std::string str() const {
    std::string s = std::string(schedule->id) + "{";
    for (size_t i = 0; i < schedule->knobs.size() && i < values.size(); ++i) {
      s += (i ? "," : "") + std::string(schedule->knobs[i].name) + "=" + std::to_string(values[i]);
    }
    return s + "}";
  }
  // Build-time knobs as " -DNAME=value" (names upper-cased).
  std::string defines() const {
    std::string out;
    for (size_t i = 0; i < schedule->knobs.size() && i < values.size(); ++i) {
      if (!schedule->knobs[i].build_time) continue;
      std::string macro;
      for (const char* p = schedule->knobs[i].name; *p; ++p) {
        macro += static_cast<char>(std::toupper(static_cast<unsigned char>(*p)));
      }
      out += " -D" + macro + "=" + std::to_string(values[i]);
    }
    return out;
  }
};

// The largest `wg_x` candidate within the device limits (capped at `cap`) that does not exceed
// the work along dim 0; 0 (driver's choice) when the schedule has none.
inline int32_t default_wg_x(const Schedule& s, const DeviceInfo& device, int64_t work_dim0,
                            int64_t cap = 64) {
  int64_t limit = device.max_work_group_size > 0 ? device.max_work_group_size : 64;
  if (!device.max_work_item_sizes.empty() && device.max_work_item_sizes[0] > 0) {
    limit = std::min(limit, device.max_work_item_sizes[0]);
  }
  limit = std::min(limit, cap);
  int32_t best = 0;
  for (const Knob& k : s.knobs) {
    if (std::string(k.name) != "wg_x") continue;
    for (int32_t v : k.candidates) {
      if (v > 0 && v <= limit && (best == 0 || v <= work_dim0)) best = std::max(best, v);
    }
  }
  return best;
}

inline size_t round_up(size_t global, size_t local) {
  return local == 0 ? global : (global + local - 1) / local * local;
}

}  // namespace tessera::opencl::support
