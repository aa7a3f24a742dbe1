// Plugin-author helper (header-only, plugin side): write an ordinary C++ class, get the C table.
//
//   class MyPlugin : public tessera::plugin::Plugin {
//     std::vector<DeviceInfo> probe(const std::string& selector) override;
//     Support query(const std::string& device, const RegionView& region,
//                   const NodeView& node) override;
//     std::unique_ptr<CompiledRegion> compile(const std::string& device, const RegionView& region,
//                                             const CompileOptions& options) override;
//     // Optional: schedules and knob spaces of a node, for packs and the tuner.
//     NodeTuning describe(const std::string& device, const RegionView& region,
//                         const NodeView& node) override;
//     // Optional: accept a deployment target's `options:` (read them later with option("name",
//     // fallback), or in compile() with options.option(...)). Default: any option is refused.
//     void check_options(const std::vector<TargetOption>& options) override;
//     // Optional (ABI 2.1): a device with memory of its own names its domain, allocates buffers
//     // in it, and its regions implement execute_io (see plugin_abi.h, tsr_buffer_kind).
//     std::string buffer_domain(const std::string& device) override;
//   };
//   TESSERA_DEFINE_PLUGIN(MyPlugin, "my", "1.0.0", "one line saying what it runs on")
//
// The macro emits the extern "C" entry symbol and a static tsr_plugin table of trampolines. Every
// trampoline catches every exception and turns it into a status + message, so nothing C++ crosses
// the boundary. Throw tessera::plugin::Failure to pick the status (e.g. TSR_COMPILE_FAILED); any
// other exception becomes TSR_ERROR with its what().
//
// Instances: each create() constructs one MyPlugin (default-constructible) and hands it the
// target's options through check_options(); destroy() deletes it. Keep every piece of mutable
// state in the object, never in statics: two instances live side by side (two targets, two
// sessions) and must not see each other's devices or options. Core calls the configuration
// methods (probe, query, compile, describe) of one instance from one thread at a time; execute()
// of distinct regions may run concurrently.
//
// Devices: probe() gives each device a stable id (DeviceInfo::id) and core passes that id back to
// query/compile/describe. Probe-list positions are not ids: a selector changes the list.
//
// Depends only on plugin_abi.h and the C++ standard library, so a plugin never links core.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "tessera/checked_math.hpp"
#include "tessera/plugin_abi.h"

namespace tessera::plugin {

// Thrown by plugin code to report a specific status; the message reaches core's plan/warnings.
class Failure : public std::exception {
 public:
  Failure(tsr_status status, std::string message) : status_(status), message_(std::move(message)) {}
  tsr_status status() const noexcept { return status_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  tsr_status status_;
  std::string message_;
};

// Bytes per element of a tsr_dtype; 0 when unknown.
inline size_t dtype_size(int32_t dtype) {
  switch (dtype) {
    case TSR_DTYPE_FLOAT32:
    case TSR_DTYPE_INT32:
      return 4;
    case TSR_DTYPE_INT64:
      return 8;
    case TSR_DTYPE_FLOAT16:
      return 2;
    case TSR_DTYPE_UINT8:
    case TSR_DTYPE_INT8:
    case TSR_DTYPE_BOOL:
      return 1;
    default:
      return 0;
  }
}

// Element count; throws Failure(TSR_INVALID_ARGUMENT) on a negative dim or int64 overflow, so a
// plugin never sizes a buffer from a wrapped count. Core refuses such shapes first; this keeps a
// plugin safe on its own (tests, other hosts).
inline int64_t tensor_numel(const tsr_tensor& t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t.rank; ++i) {
    if (t.dims[i] < 0 || !tessera::try_mul(n, t.dims[i], n)) {
      throw Failure(TSR_INVALID_ARGUMENT, "tensor dims overflow int64 or are negative (dim " +
                                              std::to_string(i) + " = " +
                                              std::to_string(t.dims[i]) + ")");
    }
  }
  return n;
}

// Byte size; throws Failure(TSR_INVALID_ARGUMENT) when it overflows int64 (2^62 float32
// elements fit as a count but not as bytes).
inline size_t tensor_nbytes(const tsr_tensor& t) {
  int64_t bytes = 0;
  if (!tessera::try_mul(tensor_numel(t), static_cast<int64_t>(dtype_size(t.dtype)), bytes)) {
    throw Failure(TSR_INVALID_ARGUMENT, "tensor byte size overflows int64");
  }
  return static_cast<size_t>(bytes);
}

inline std::vector<int64_t> tensor_shape(const tsr_tensor& t) {
  return std::vector<int64_t>(t.dims, t.dims + t.rank);
}

// ---- Arrays of boundary structs (ABI 2.3: plugin_abi.h, "Arrays of structs") ----
// The trampolines below read and write every array by the stride it travels with and hand plugin
// code arrays in this build's own layout, so a plugin class never sees a stride. These helpers are
// for code that calls a C table directly (tests, other hosts).

// The byte step of an array whose stride field says `declared`: 0 means the element's ABI 2.2
// size, which is its sizeof here (no element struct has grown since 2.2). Throws
// Failure(TSR_INVALID_ARGUMENT) above TSR_MAX_STRIDE.
template <class T>
uint32_t array_stride(uint32_t declared) {
  if (declared == 0) return static_cast<uint32_t>(sizeof(T));
  if (declared > TSR_MAX_STRIDE) {
    throw Failure(TSR_INVALID_ARGUMENT,
                  "array element size " + std::to_string(declared) + " is above TSR_MAX_STRIDE");
  }
  return declared;
}

// Byte offset of element `i` of an array `stride` bytes apart; throws
// Failure(TSR_INVALID_ARGUMENT) for a negative index or an offset that does not fit in size_t.
inline size_t element_offset(int64_t i, uint32_t stride) {
  int64_t bytes = 0;
  if (i < 0 || !tessera::try_mul(i, static_cast<int64_t>(stride), bytes) ||
      static_cast<uint64_t>(bytes) > static_cast<uint64_t>(SIZE_MAX)) {
    throw Failure(TSR_INVALID_ARGUMENT, "array element " + std::to_string(i) + " at stride " +
                                            std::to_string(stride) + " is out of range");
  }
  return static_cast<size_t>(bytes);
}

// Element `i` of an array of T laid out `stride` bytes apart: the fields that end within the
// stride (fields are only appended, each past the struct's previous size), `defaults` for the
// rest. Never reads past the element.
template <class T>
T read_element(const void* base, int64_t i, uint32_t stride, T defaults = T{}) {
  static_assert(std::is_trivially_copyable_v<T>, "boundary structs are plain C");
  std::memcpy(&defaults, static_cast<const unsigned char*>(base) + element_offset(i, stride),
              std::min<size_t>(stride, sizeof(T)));
  return defaults;
}

// Writes `value` as element `i` of an array laid out `stride` bytes apart: the fields that end
// within the stride, nothing past it.
template <class T>
void write_element(void* base, int64_t i, uint32_t stride, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>, "boundary structs are plain C");
  std::memcpy(static_cast<unsigned char*>(base) + element_offset(i, stride), &value,
              std::min<size_t>(stride, sizeof(T)));
}

// A single struct from the other side: the fields its struct_size holds, and at least the first
// `floor` bytes (the fields every peer sets, whatever struct_size it wrote), over `defaults`.
template <class T>
T read_struct(const T* p, size_t floor, T defaults = T{}) {
  static_assert(std::is_trivially_copyable_v<T>, "boundary structs are plain C");
  std::memcpy(&defaults, p, std::min(std::max<size_t>(p->struct_size, floor), sizeof(T)));
  return defaults;
}

// `count` elements of T read from an array `stride` bytes apart (none for a count <= 0).
template <class T>
std::vector<T> read_array(const void* base, int64_t count, uint32_t stride) {
  std::vector<T> out;
  if (count <= 0) return out;
  if (base == nullptr) {
    throw Failure(TSR_INVALID_ARGUMENT,
                  "array of " + std::to_string(count) + " elements has a null pointer");
  }
  out.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out.push_back(read_element<T>(base, i, stride));
  return out;
}

// Read-only view of one node of a region, with typed attribute getters that return the default
// when the attribute is absent and throw Failure(TSR_INVALID_ARGUMENT) when its kind is wrong.
class NodeView {
 public:
  NodeView(const tsr_region* region, int32_t index) : region_(region), index_(index) {}

  int32_t index() const { return index_; }
  const tsr_node& raw() const { return region_->nodes[index_]; }
  std::string_view name() const { return raw().name ? raw().name : ""; }
  std::string_view op_type() const { return raw().op_type ? raw().op_type : ""; }

  int32_t num_inputs() const { return raw().num_inputs; }
  int32_t num_outputs() const { return raw().num_outputs; }
  // Value index of input/output i in the region's value table; -1 when omitted or out of range.
  int32_t input_index(int32_t i) const {
    return i >= 0 && i < raw().num_inputs ? raw().inputs[i] : -1;
  }
  int32_t output_index(int32_t i) const {
    return i >= 0 && i < raw().num_outputs ? raw().outputs[i] : -1;
  }
  // nullptr when omitted.
  const tsr_tensor* input(int32_t i) const {
    const int32_t v = input_index(i);
    return v < 0 ? nullptr : &region_->values[v];
  }
  const tsr_tensor* output(int32_t i) const {
    const int32_t v = output_index(i);
    return v < 0 ? nullptr : &region_->values[v];
  }

  const tsr_attribute* find_attribute(std::string_view name) const {
    for (int32_t i = 0; i < raw().num_attributes; ++i) {
      const tsr_attribute& a = raw().attributes[i];
      if (a.name != nullptr && name == a.name) return &a;
    }
    return nullptr;
  }
  bool has_attribute(std::string_view name) const { return find_attribute(name) != nullptr; }

  int64_t attr_int(std::string_view name, int64_t fallback) const {
    const tsr_attribute* a = typed(name, TSR_ATTR_INT);
    return a ? a->i : fallback;
  }
  float attr_float(std::string_view name, float fallback) const {
    const tsr_attribute* a = typed(name, TSR_ATTR_FLOAT);
    return a ? a->f : fallback;
  }
  std::string attr_string(std::string_view name, const std::string& fallback) const {
    const tsr_attribute* a = typed(name, TSR_ATTR_STRING);
    return a ? std::string(a->s ? a->s : "") : fallback;
  }
  std::vector<int64_t> attr_ints(std::string_view name,
                                 const std::vector<int64_t>& fallback) const {
    const tsr_attribute* a = typed(name, TSR_ATTR_INTS);
    return a ? std::vector<int64_t>(a->ints, a->ints + a->count) : fallback;
  }
  std::vector<float> attr_floats(std::string_view name, const std::vector<float>& fallback) const {
    const tsr_attribute* a = typed(name, TSR_ATTR_FLOATS);
    return a ? std::vector<float>(a->floats, a->floats + a->count) : fallback;
  }
  std::vector<std::string> attr_strings(std::string_view name,
                                        const std::vector<std::string>& fallback) const {
    const tsr_attribute* a = typed(name, TSR_ATTR_STRINGS);
    if (a == nullptr) return fallback;
    std::vector<std::string> out;
    for (int64_t i = 0; i < a->count; ++i) out.emplace_back(a->strings[i] ? a->strings[i] : "");
    return out;
  }

  // "node 'relu1' (Relu)" for messages.
  std::string describe() const {
    return "node '" + std::string(name()) + "' (" + std::string(op_type()) + ")";
  }

 private:
  const tsr_attribute* typed(std::string_view name, int32_t kind) const {
    const tsr_attribute* a = find_attribute(name);
    if (a != nullptr && a->kind != kind) {
      throw Failure(TSR_INVALID_ARGUMENT, describe() + ": attribute '" + std::string(name) +
                                              "' has kind " + std::to_string(a->kind) +
                                              ", expected " + std::to_string(kind));
    }
    return a;
  }

  const tsr_region* region_;
  int32_t index_;
};

// Read-only view of a region handed to query/compile. Valid only during the call, except that
// constants' data stays valid until the compiled region is released (see plugin_abi.h).
class RegionView {
 public:
  explicit RegionView(const tsr_region* region) : region_(region) {}

  const tsr_region& raw() const { return *region_; }
  int64_t opset() const { return region_->opset; }
  int32_t num_values() const { return region_->num_values; }
  const tsr_tensor& value(int32_t i) const { return region_->values[i]; }
  int32_t num_nodes() const { return region_->num_nodes; }
  NodeView node(int32_t i) const { return NodeView(region_, i); }
  int32_t num_inputs() const { return region_->num_inputs; }
  int32_t input_index(int32_t i) const { return region_->inputs[i]; }
  int32_t num_outputs() const { return region_->num_outputs; }
  int32_t output_index(int32_t i) const { return region_->outputs[i]; }

 private:
  const tsr_region* region_;
};

// Who reads each value of a region, for answers that look across nodes (query_subgraph).
class ValueReaders {
 public:
  explicit ValueReaders(const RegionView& region)
      : readers_(static_cast<size_t>(region.num_values())),
        output_(static_cast<size_t>(region.num_values()), 0) {
    for (int32_t i = 0; i < region.num_nodes(); ++i) {
      const NodeView node = region.node(i);
      for (int32_t k = 0; k < node.num_inputs(); ++k) {
        const int32_t v = node.input_index(k);
        if (v >= 0 && v < region.num_values()) readers_[static_cast<size_t>(v)].push_back(i);
      }
    }
    for (int32_t i = 0; i < region.num_outputs(); ++i) {
      const int32_t v = region.output_index(i);
      if (v >= 0 && v < region.num_values()) output_[static_cast<size_t>(v)] = 1;
    }
  }
  // The one node reading value `v`, or -1 when none or several do, or `v` leaves the region.
  int32_t sole_reader(int32_t v) const {
    if (v < 0 || static_cast<size_t>(v) >= readers_.size() || output_[static_cast<size_t>(v)]) {
      return -1;
    }
    const std::vector<int32_t>& r = readers_[static_cast<size_t>(v)];
    return r.size() == 1 ? r.front() : -1;
  }

 private:
  std::vector<std::vector<int32_t>> readers_;
  std::vector<char> output_;
};

// Strings are copied by the helper and kept alive until the instance is destroyed, as the ABI
// requires.
struct DeviceInfo {
  std::string id;  // stable across probes and processes: 1-63 characters of [A-Za-z0-9._-]
  std::string vendor;
  std::string name;
  std::string driver_version;
  std::string kind = "cpu";  // "cpu", "gpu", "npu"
  int32_t compute_units = 0;
  int64_t memory_bytes = 0;
  std::string features;
  int32_t score = 1;  // 0 = unusable (say why in unusable_reason)
  std::string unusable_reason;
};

struct Support {
  bool supported = false;
  tsr_layout preferred_layout = TSR_LAYOUT_ANY;
  double cost_us = 0.0;
  std::string reason;  // why not, or a short note; truncated to 255 bytes
  // query_subgraph only: the region node whose kernel also computes this one, -1 = none.
  int32_t fused_into = -1;

  static Support yes(double cost_us, std::string note = {}) {
    Support s;
    s.supported = true;
    s.cost_us = cost_us;
    s.reason = std::move(note);
    return s;
  }
  static Support no(std::string reason) {
    Support s;
    s.reason = std::move(reason);
    return s;
  }
};

// For query_subgraph answers: where a supported node's output 0 is read by exactly one supported
// node, as that node's input 0, and `fuses(producer, reader)` says the producer's kernel computes
// the reader too, marks the reader fused into the producer (cost 0, reason naming the producer).
template <class Fuses>
void mark_fused_readers(const RegionView& region, std::vector<Support>& answers,
                        const Fuses& fuses) {
  const ValueReaders readers(region);
  for (int32_t n = 0; n < region.num_nodes(); ++n) {
    if (!answers[static_cast<size_t>(n)].supported) continue;
    const NodeView producer = region.node(n);
    const int32_t out = producer.output_index(0);
    const int32_t r = readers.sole_reader(out);
    if (r < 0 || !answers[static_cast<size_t>(r)].supported) continue;
    const NodeView reader = region.node(r);
    if (reader.input_index(0) != out || !fuses(producer, reader)) continue;
    Support& fused = answers[static_cast<size_t>(r)];
    fused.fused_into = n;
    fused.cost_us = 0.0;
    fused.reason = "runs in the kernel of " + producer.describe();
  }
}

// One knob of a schedule: the integer values it may take and the heuristic's choice for the node.
struct KnobSpace {
  std::string name;             // e.g. "wg_x", "block"
  std::vector<int64_t> values;  // candidates, in grid-search order
  int64_t default_value = 0;    // the heuristic's value for this node (one of `values`)
};

// One way to compute a node, with its knob space.
struct Schedule {
  std::string name;  // unique within the plugin, e.g. "conv2d.direct"
  std::vector<KnobSpace> knobs;
};

// What describe() returns: nothing tunable by default (no schedules).
struct NodeTuning {
  std::string workload_key;  // canonical: op, shapes, attributes, dtype, layout
  double flops = 0.0;
  std::vector<Schedule> schedules;  // empty = nothing to tune
  int32_t default_schedule = 0;     // index into `schedules`
};

struct KnobValue {
  std::string name;
  int64_t value = 0;
};

// A config core chose for one node (from a pack or the tuner). A plugin applies it when it can and
// otherwise uses its heuristic for that node alone (never failing the compile because of it).
struct NodeConfig {
  int32_t node = -1;  // index into the region's nodes
  std::string schedule;
  std::vector<KnobValue> knobs;
  // The knob's value, or `fallback` when the config does not set it.
  int64_t knob(std::string_view name, int64_t fallback) const {
    for (const KnobValue& k : knobs) {
      if (name == k.name) return k.value;
    }
    return fallback;
  }
};

// One `options:` entry of a deployment target, as text.
struct TargetOption {
  std::string name;
  std::string value;
};

struct CompileOptions {
  int32_t num_threads = 0;
  std::string precision = "fp32";
  std::string cache_dir;  // "" = none
  std::string pack_path;  // "" = heuristics
  std::string dump_dir;   // "" = none; else write each built program's source there
  bool profile = true;    // false: last_profile() is never read; skip per-node timing
  // Configs core chose for some nodes of the region (from a pack or the tuner).
  std::vector<NodeConfig> node_configs;
  // The config for region node `node`, or nullptr (= use the heuristic).
  const NodeConfig* config_for(int32_t node) const {
    for (const NodeConfig& c : node_configs) {
      if (c.node == node) return &c;
    }
    return nullptr;
  }
  // The instance's target options (as check_options accepted them), for convenience.
  std::vector<TargetOption> target_options;
  // The value of option `name`, or `fallback` when the target does not set it.
  std::string option(std::string_view name, const std::string& fallback) const {
    for (const TargetOption& o : target_options) {
      if (name == o.name) return o.value;
    }
    return fallback;
  }
};

namespace detail {
template <typename T>
struct Host;
}  // namespace detail

// What compile() returns. Buffers passed to execute() are host, dense, row-major, in the order of
// the region's inputs/outputs. Called from one thread at a time per region.
class CompiledRegion {
 public:
  virtual ~CompiledRegion() = default;
  virtual void execute(const void* const* inputs, void* const* outputs) = 0;
  // Each input and output in host memory or a buffer of the plugin's memory domain (see
  // Plugin::buffer_domain); called only for plugins that name a domain. A buffer output must be
  // complete on return.
  virtual void execute_io(const tsr_io* inputs, const tsr_io* outputs) {
    (void)inputs;
    (void)outputs;
    throw Failure(TSR_UNSUPPORTED, "this region takes host memory only");
  }
  // Per-node times of the last execute in microseconds; empty = not profiled.
  virtual std::vector<double> last_profile() { return {}; }

 private:
  template <typename T>
  friend struct detail::Host;
  // Kept by the SDK from the region compiled: how core lays out execute_io's arrays.
  uint32_t io_size_ = sizeof(tsr_io);
  int32_t num_inputs_ = 0;
  int32_t num_outputs_ = 0;
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  // `selector` is "" when core passes none. Return every device, usable or not, each with its
  // stable id.
  virtual std::vector<DeviceInfo> probe(const std::string& selector) = 0;
  // `device` is an id probe() returned. Must answer (not throw) for unknown ops:
  // Support::no("op X not implemented").
  virtual Support query(const std::string& device, const RegionView& region,
                        const NodeView& node) = 0;
  // Throw Failure(TSR_COMPILE_FAILED, ...) to make core fall back to the next plugin.
  virtual std::unique_ptr<CompiledRegion> compile(const std::string& device,
                                                  const RegionView& region,
                                                  const CompileOptions& options) = 0;
  // Capability over a subgraph (ABI 2.2): one answer per node of `region`, in node order, with
  // costs that count what the plugin does across nodes (Support::fused_into). Default: query()
  // for each node, nothing fused.
  virtual std::vector<Support> query_subgraph(const std::string& device, const RegionView& region) {
    std::vector<Support> answers;
    for (int32_t i = 0; i < region.num_nodes(); ++i) {
      try {
        answers.push_back(query(device, region, region.node(i)));
      } catch (const std::exception& e) {
        answers.push_back(Support::no(e.what()));
      }
    }
    return answers;
  }
  // Schedules and knob spaces for `node` and its workload key. Default: nothing tunable.
  virtual NodeTuning describe(const std::string& device, const RegionView& region,
                              const NodeView& node) {
    (void)device;
    (void)region;
    (void)node;
    return {};
  }
  // The target's `options:`, once, when the instance is created (before anything else). Throw
  // Failure(TSR_INVALID_ARGUMENT, ...) naming an unknown option or bad value. Default: the plugin
  // takes no options.
  virtual void check_options(const std::vector<TargetOption>& options) {
    if (!options.empty()) {
      throw Failure(TSR_INVALID_ARGUMENT,
                    "unknown option '" + options.front().name + "' (this plugin takes no options)");
    }
  }

  // The memory domain of `device` (ABI 2.1): values between regions of devices of one domain
  // stay in its buffers (see plugin_abi.h). "" (the default): host memory only, and core never
  // calls the three below or CompiledRegion::execute_io.
  virtual std::string buffer_domain(const std::string& device) {
    (void)device;
    return "";
  }
  virtual tsr_buffer alloc_buffer(const std::string& device, uint64_t bytes) {
    (void)device;
    (void)bytes;
    throw Failure(TSR_UNSUPPORTED, "this plugin allocates no buffers");
  }
  virtual void free_buffer(tsr_buffer buffer) { (void)buffer; }

  // The instance's options as check_options accepted them.
  const std::vector<TargetOption>& options() const { return options_; }
  // The value of option `name`, or `fallback` when the target does not set it.
  std::string option(std::string_view name, const std::string& fallback) const {
    for (const TargetOption& o : options_) {
      if (name == o.name) return o.value;
    }
    return fallback;
  }

 private:
  template <typename T>
  friend struct detail::Host;
  std::vector<TargetOption> options_;
};

namespace detail {

inline void write_message(tsr_message message, const char* text) {
  if (message.text == nullptr || message.capacity == 0) return;
  const size_t n = std::min(std::strlen(text), message.capacity - 1);
  std::memcpy(message.text, text, n);
  message.text[n] = '\0';
}

// Runs `fn`, mapping exceptions to a status and writing their text into `message`.
template <typename Fn>
tsr_status guarded(tsr_message message, Fn&& fn) noexcept {
  try {
    fn();
    return TSR_OK;
  } catch (const Failure& e) {
    write_message(message, e.what());
    return e.status();
  } catch (const std::bad_alloc&) {
    write_message(message, "out of host memory");
    return TSR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    write_message(message, e.what());
    return TSR_ERROR;
  } catch (...) {
    write_message(message, "unknown exception inside the plugin");
    return TSR_ERROR;
  }
}

// The region core handed to one call, in this build's layout: core's arrays as they are when
// their strides are this build's sizes (every core of this minor), else copies read by stride.
// Pointers into it live as long as the object (one call); constants' data stay core's.
class NativeRegion {
 public:
  explicit NativeRegion(const tsr_region* region) {
    if (region == nullptr) throw Failure(TSR_INVALID_ARGUMENT, "null region");
    // The 2.3 strides stay 0 (the 2.2 sizes) where a core's struct_size does not hold them.
    region_ = read_struct(region, offsetof(tsr_region, value_size));
    if (region_.num_values < 0 || region_.num_nodes < 0) {
      throw Failure(TSR_INVALID_ARGUMENT, "region with a negative value or node count");
    }
    const uint32_t value_stride = array_stride<tsr_tensor>(region_.value_size);
    const uint32_t node_stride = array_stride<tsr_node>(region_.node_size);
    const uint32_t attribute_stride = array_stride<tsr_attribute>(region_.attribute_size);
    io_size_ = array_stride<tsr_io>(region_.io_size);
    region_.struct_size = sizeof(tsr_region);
    region_.value_size = sizeof(tsr_tensor);
    region_.node_size = sizeof(tsr_node);
    region_.attribute_size = sizeof(tsr_attribute);
    region_.io_size = sizeof(tsr_io);
    if (value_stride != sizeof(tsr_tensor)) {
      values_ = read_array<tsr_tensor>(region->values, region_.num_values, value_stride);
      region_.values = values_.data();
    }
    if (node_stride != sizeof(tsr_node) || attribute_stride != sizeof(tsr_attribute) ||
        !attribute_tensors_native(region_)) {
      copy_nodes(region->nodes, node_stride, attribute_stride);
    }
  }
  NativeRegion(const NativeRegion&) = delete;
  NativeRegion& operator=(const NativeRegion&) = delete;

  const tsr_region* get() const { return &region_; }
  // Stride of the tsr_io arrays execute_region_io passes to a region compiled from this one.
  uint32_t io_size() const { return io_size_; }

 private:
  // Whether every tensor attribute of `region` (native node and attribute strides) holds a whole
  // tsr_tensor of this build.
  static bool attribute_tensors_native(const tsr_region& region) {
    for (int32_t n = 0; n < region.num_nodes; ++n) {
      const tsr_node& node = region.nodes[n];
      for (int32_t a = 0; a < node.num_attributes; ++a) {
        const tsr_tensor* t = node.attributes[a].tensor;
        if (t != nullptr && t->struct_size != 0 && t->struct_size < sizeof(tsr_tensor))
          return false;
      }
    }
    return true;
  }

  void copy_nodes(const tsr_node* nodes, uint32_t node_stride, uint32_t attribute_stride) {
    nodes_ = read_array<tsr_node>(nodes, region_.num_nodes, node_stride);
    attributes_.resize(nodes_.size());
    for (size_t n = 0; n < nodes_.size(); ++n) {
      tsr_node& node = nodes_[n];
      std::vector<tsr_attribute>& attrs = attributes_[n];
      attrs = read_array<tsr_attribute>(node.attributes, node.num_attributes, attribute_stride);
      for (tsr_attribute& a : attrs) {
        if (a.tensor == nullptr || a.tensor->struct_size == 0) continue;
        // A single struct: its own struct_size says which fields it holds.
        tensors_.push_back(read_element<tsr_tensor>(a.tensor, 0, a.tensor->struct_size));
        a.tensor = &tensors_.back();
      }
      node.attributes = attrs.empty() ? nullptr : attrs.data();
    }
    region_.nodes = nodes_.empty() ? nullptr : nodes_.data();
  }

  tsr_region region_{};
  uint32_t io_size_ = sizeof(tsr_io);
  std::vector<tsr_tensor> values_;
  std::vector<tsr_node> nodes_;
  std::vector<std::vector<tsr_attribute>> attributes_;
  std::deque<tsr_tensor> tensors_;
};

// The trampolines of plugin class T. An instance handle is an Instance*: the plugin object plus
// the storage the ABI makes the helper keep for it.
template <typename T>
struct Host {
  // The C view of the last describe() result of one thread; the ABI keeps its pointers valid
  // until the next describe_node call on the same instance and thread.
  struct DescribeStorage {
    NodeTuning tuning;
    std::vector<tsr_schedule_desc> schedules;
    std::vector<std::vector<tsr_knob_space>> knob_spaces;
    std::vector<std::vector<tsr_knob>> defaults;
  };
  struct Instance {
    std::unique_ptr<Plugin> plugin;
    // Every string probe has handed out, kept until destroy as the ABI promises (core may still
    // copy one answer while it probes again). A set, so repeated probes add nothing.
    std::set<std::string> probed_strings;
    // Per calling thread, kept here rather than in thread_local variables: glibc pins a library
    // that has live thread_local destructors, so a plugin using them could not be unloaded.
    std::map<std::thread::id, DescribeStorage> described;
    std::mutex mutex;
  };

  static Instance& of(tsr_instance instance) {
    if (instance == nullptr) throw Failure(TSR_INVALID_ARGUMENT, "null plugin instance");
    return *reinterpret_cast<Instance*>(instance);
  }

  // create's options, laid out at host->target_option_size (ABI 2.3).
  static std::vector<TargetOption> to_options(const tsr_host_api* host,
                                              const tsr_target_option* options, int32_t count) {
    const uint32_t declared =
        host != nullptr
            ? read_struct(host, offsetof(tsr_host_api, target_option_size)).target_option_size
            : 0;
    std::vector<TargetOption> out;
    if (options == nullptr) return out;
    for (const tsr_target_option& o :
         read_array<tsr_target_option>(options, count, array_stride<tsr_target_option>(declared))) {
      out.push_back({o.name ? o.name : "", o.value ? o.value : ""});
    }
    return out;
  }

  static tsr_status create(const tsr_host_api* host, const tsr_target_option* options,
                           int32_t num_options, tsr_instance* instance,
                           tsr_message message) noexcept {
    return guarded(message, [&] {
      if (instance == nullptr) throw Failure(TSR_INVALID_ARGUMENT, "create: null out pointer");
      *instance = nullptr;
      if (host != nullptr && host->abi_major != TESSERA_PLUGIN_ABI_MAJOR) {
        throw Failure(TSR_INVALID_ARGUMENT, "host ABI major " + std::to_string(host->abi_major) +
                                                " is not " +
                                                std::to_string(TESSERA_PLUGIN_ABI_MAJOR));
      }
      auto made = std::make_unique<Instance>();
      made->plugin = std::make_unique<T>();
      std::vector<TargetOption> accepted = to_options(host, options, num_options);
      made->plugin->check_options(accepted);
      made->plugin->options_ = std::move(accepted);
      *instance = reinterpret_cast<tsr_instance>(made.release());
    });
  }

  static void destroy(tsr_instance instance) noexcept {
    char text[8];
    guarded(tsr_message{text, sizeof(text)}, [&] { delete reinterpret_cast<Instance*>(instance); });
  }

  static tsr_status probe(tsr_instance instance, const char* selector, tsr_device_info* out,
                          int32_t capacity, int32_t* count, tsr_message message) noexcept {
    return guarded(message, [&] {
      Instance& s = of(instance);
      std::lock_guard<std::mutex> lock(s.mutex);
      const std::vector<DeviceInfo> devices = s.plugin->probe(selector ? selector : "");
      auto keep = [&s](const std::string& text) {
        return s.probed_strings.insert(text).first->c_str();
      };
      const int32_t n =
          out == nullptr ? 0 : std::min<int32_t>(capacity, static_cast<int32_t>(devices.size()));
      // Core's array: element 0's struct_size is its stride (0 from a core of 2.2 or before).
      const uint32_t stride = array_stride<tsr_device_info>(n > 0 ? out[0].struct_size : 0);
      for (int32_t i = 0; i < n; ++i) {
        const DeviceInfo& d = devices[static_cast<size_t>(i)];
        tsr_device_info info{};
        info.struct_size = stride;
        info.id = keep(d.id);
        info.vendor = keep(d.vendor);
        info.name = keep(d.name);
        info.driver_version = keep(d.driver_version);
        info.kind = keep(d.kind);
        info.compute_units = d.compute_units;
        info.memory_bytes = d.memory_bytes;
        info.features = keep(d.features);
        info.score = d.score;
        info.unusable_reason = keep(d.unusable_reason);
        write_element(out, i, stride, info);
      }
      *count = n;
    });
  }

  static tsr_status query(tsr_instance instance, const char* device, const tsr_region* region,
                          int32_t node, tsr_support* support) noexcept {
    char text[256] = {0};
    tsr_message message{text, sizeof(text)};
    Support answer;
    const tsr_status status = guarded(message, [&] {
      const NativeRegion native(region);
      if (node < 0 || node >= native.get()->num_nodes) {
        throw Failure(TSR_INVALID_ARGUMENT,
                      "node " + std::to_string(node) + " is not in the region");
      }
      answer = of(instance).plugin->query(device ? device : "", RegionView(native.get()),
                                          NodeView(native.get(), node));
    });
    support->supported = status == TSR_OK && answer.supported ? 1 : 0;
    support->preferred_layout = answer.preferred_layout;
    support->cost_us = answer.cost_us;
    const std::string& reason = status == TSR_OK ? answer.reason : std::string(text);
    tsr_message out{support->reason, sizeof(support->reason)};
    write_message(out, reason.c_str());
    return status;
  }

  static tsr_status query_subgraph(tsr_instance instance, const char* device,
                                   const tsr_region* region, tsr_support* answers,
                                   tsr_message message) noexcept {
    return guarded(message, [&] {
      const NativeRegion native(region);
      const int32_t num_nodes = native.get()->num_nodes;
      const std::vector<Support> got =
          of(instance).plugin->query_subgraph(device ? device : "", RegionView(native.get()));
      if (static_cast<int32_t>(got.size()) != num_nodes) {
        throw Failure(TSR_ERROR, "query_subgraph() answered " + std::to_string(got.size()) +
                                     " nodes of " + std::to_string(num_nodes));
      }
      if (num_nodes > 0 && answers == nullptr) throw Failure(TSR_INVALID_ARGUMENT, "null answers");
      // Core's array: element 0's struct_size is its stride, and core's defaults fill the rest.
      const uint32_t stride = array_stride<tsr_support>(num_nodes > 0 ? answers[0].struct_size : 0);
      for (int32_t i = 0; i < num_nodes; ++i) {
        const Support& a = got[static_cast<size_t>(i)];
        tsr_support out = read_element<tsr_support>(answers, i, stride);
        out.supported = a.supported ? 1 : 0;
        out.preferred_layout = a.preferred_layout;
        out.cost_us = a.cost_us;
        out.fused_into = a.fused_into;
        write_message(tsr_message{out.reason, sizeof(out.reason)}, a.reason.c_str());
        write_element(answers, i, stride, out);
      }
    });
  }

  static tsr_status compile(tsr_instance instance, const char* device, const tsr_region* region,
                            const tsr_compile_options* options, tsr_region_handle* handle,
                            tsr_message message) noexcept {
    return guarded(message, [&] {
      Plugin& plugin = *of(instance).plugin;
      const NativeRegion native(region);
      CompileOptions opts = to_compile_options(options);
      opts.target_options = plugin.options();
      std::unique_ptr<CompiledRegion> compiled =
          plugin.compile(device ? device : "", RegionView(native.get()), opts);
      if (!compiled) throw Failure(TSR_COMPILE_FAILED, "compile() returned no region");
      compiled->io_size_ = native.io_size();
      compiled->num_inputs_ = native.get()->num_inputs;
      compiled->num_outputs_ = native.get()->num_outputs;
      *handle = reinterpret_cast<tsr_region_handle>(compiled.release());
    });
  }

  // Core's compile options, their node configs and knobs read by their strides (ABI 2.3).
  static CompileOptions to_compile_options(const tsr_compile_options* raw) {
    CompileOptions opts;
    if (raw == nullptr) return opts;
    // `profile` reads as 1 where a core's struct does not hold it.
    tsr_compile_options defaults{};
    defaults.profile = 1;
    const tsr_compile_options o =
        read_struct(raw, offsetof(tsr_compile_options, dump_dir) + sizeof(raw->dump_dir), defaults);
    opts.num_threads = o.num_threads;
    if (o.precision) opts.precision = o.precision;
    if (o.cache_dir) opts.cache_dir = o.cache_dir;
    if (o.pack_path) opts.pack_path = o.pack_path;
    if (o.dump_dir) opts.dump_dir = o.dump_dir;
    opts.profile = o.profile != 0;
    if (o.node_configs == nullptr) return opts;
    const uint32_t config_stride = array_stride<tsr_node_config>(o.node_config_size);
    const uint32_t knob_stride = array_stride<tsr_knob>(o.knob_size);
    for (const tsr_node_config& c :
         read_array<tsr_node_config>(o.node_configs, o.num_node_configs, config_stride)) {
      NodeConfig config;
      config.node = c.node;
      config.schedule = c.schedule ? c.schedule : "";
      if (c.knobs != nullptr) {
        for (const tsr_knob& k : read_array<tsr_knob>(c.knobs, c.num_knobs, knob_stride)) {
          config.knobs.push_back({k.name ? k.name : "", k.value});
        }
      }
      opts.node_configs.push_back(std::move(config));
    }
    return opts;
  }

  static tsr_status describe(tsr_instance instance, const char* device, const tsr_region* region,
                             int32_t node, tsr_node_tuning* tuning, tsr_message message) noexcept {
    return guarded(message, [&] {
      Instance& s = of(instance);
      const NativeRegion native(region);
      if (node < 0 || node >= native.get()->num_nodes) {
        throw Failure(TSR_INVALID_ARGUMENT,
                      "node " + std::to_string(node) + " is not in the region");
      }
      NodeTuning answer = s.plugin->describe(device ? device : "", RegionView(native.get()),
                                             NodeView(native.get(), node));
      const int32_t num_schedules = static_cast<int32_t>(answer.schedules.size());
      if (num_schedules > 0 &&
          (answer.default_schedule < 0 || answer.default_schedule >= num_schedules)) {
        throw Failure(TSR_ERROR, "describe(): default_schedule " +
                                     std::to_string(answer.default_schedule) +
                                     " is not an index into its " + std::to_string(num_schedules) +
                                     " schedule(s)");
      }
      std::lock_guard<std::mutex> lock(s.mutex);
      DescribeStorage& d = s.described[std::this_thread::get_id()];
      d.tuning = std::move(answer);
      d.schedules.clear();
      d.knob_spaces.clear();
      d.defaults.clear();
      d.knob_spaces.resize(d.tuning.schedules.size());
      d.defaults.resize(d.tuning.schedules.size());
      for (size_t i = 0; i < d.tuning.schedules.size(); ++i) {
        const Schedule& sched = d.tuning.schedules[i];
        for (const KnobSpace& k : sched.knobs) {
          d.knob_spaces[i].push_back(
              {k.name.c_str(), static_cast<int32_t>(k.values.size()), k.values.data()});
          d.defaults[i].push_back({k.name.c_str(), k.default_value});
        }
        d.schedules.push_back({sched.name.c_str(), static_cast<int32_t>(sched.knobs.size()),
                               d.knob_spaces[i].data(), d.defaults[i].data()});
      }
      tsr_node_tuning out{};
      out.workload_key = d.tuning.workload_key.c_str();
      out.flops = d.tuning.flops;
      out.num_schedules = static_cast<int32_t>(d.schedules.size());
      out.schedules = d.schedules.empty() ? nullptr : d.schedules.data();
      out.default_schedule = d.tuning.default_schedule;
      out.schedule_size = sizeof(tsr_schedule_desc);
      out.knob_space_size = sizeof(tsr_knob_space);
      out.knob_size = sizeof(tsr_knob);
      // Only the fields core's struct holds: a core of 2.2 or before has no room for the strides
      // (and reads this build's arrays, which have the 2.2 sizes, as they are).
      const size_t room =
          std::min(std::max<size_t>(tuning->struct_size, offsetof(tsr_node_tuning, reserved0)),
                   sizeof(tsr_node_tuning));
      out.struct_size = static_cast<uint32_t>(room);
      std::memcpy(tuning, &out, room);
    });
  }

  static tsr_status buffer_kind(tsr_instance instance, const char* device,
                                tsr_buffer_kind* kind) noexcept {
    char text[8];
    return guarded(tsr_message{text, sizeof(text)}, [&] {
      Instance& s = of(instance);
      const std::string domain = s.plugin->buffer_domain(device ? device : "");
      std::lock_guard<std::mutex> lock(s.mutex);
      kind->domain = s.probed_strings.insert(domain).first->c_str();
      kind->alignment = 0;
      kind->host_mappable = 0;
    });
  }

  static tsr_status alloc_buffer(tsr_instance instance, const char* device, uint64_t bytes,
                                 tsr_buffer* buffer, tsr_message message) noexcept {
    return guarded(message, [&] {
      *buffer = nullptr;
      *buffer = of(instance).plugin->alloc_buffer(device ? device : "", bytes);
    });
  }

  static void free_buffer(tsr_instance instance, tsr_buffer buffer) noexcept {
    char text[8];
    guarded(tsr_message{text, sizeof(text)}, [&] { of(instance).plugin->free_buffer(buffer); });
  }

  static tsr_status execute_io(tsr_region_handle handle, const tsr_io* inputs,
                               const tsr_io* outputs, tsr_message message) noexcept {
    return guarded(message, [&] {
      CompiledRegion& region = *reinterpret_cast<CompiledRegion*>(handle);
      if (region.io_size_ == sizeof(tsr_io)) {
        region.execute_io(inputs, outputs);
        return;
      }
      // Core's arrays at another stride than this build's: hand the region native copies.
      const std::vector<tsr_io> in =
          read_array<tsr_io>(inputs, region.num_inputs_, region.io_size_);
      const std::vector<tsr_io> out =
          read_array<tsr_io>(outputs, region.num_outputs_, region.io_size_);
      region.execute_io(in.data(), out.data());
    });
  }

  static tsr_status execute(tsr_region_handle handle, const void* const* inputs,
                            void* const* outputs, tsr_message message) noexcept {
    return guarded(message,
                   [&] { reinterpret_cast<CompiledRegion*>(handle)->execute(inputs, outputs); });
  }

  static void release(tsr_region_handle handle) noexcept {
    char text[8];
    guarded(tsr_message{text, sizeof(text)},
            [&] { delete reinterpret_cast<CompiledRegion*>(handle); });
  }

  static tsr_status profile(tsr_region_handle handle, double* times_us, int32_t capacity,
                            int32_t* count) noexcept {
    char text[8];
    tsr_status status = TSR_OK;
    guarded(tsr_message{text, sizeof(text)}, [&] {
      std::vector<double> times = reinterpret_cast<CompiledRegion*>(handle)->last_profile();
      if (times.empty()) {
        status = TSR_UNSUPPORTED;
        *count = 0;
        return;
      }
      const int32_t n = std::min<int32_t>(capacity, static_cast<int32_t>(times.size()));
      for (int32_t i = 0; i < n; ++i) times_us[i] = times[static_cast<size_t>(i)];
      *count = n;
    });
    return status;
  }

  static const tsr_plugin* entry(uint32_t host_major, const char* name, const char* version,
                                 const char* description) noexcept {
    if (host_major != TESSERA_PLUGIN_ABI_MAJOR) return nullptr;
    static const tsr_plugin table = {sizeof(tsr_plugin),
                                     TESSERA_PLUGIN_ABI_MAJOR,
                                     TESSERA_PLUGIN_ABI_MINOR,
                                     name,
                                     version,
                                     description,
                                     &create,
                                     &destroy,
                                     &probe,
                                     &query,
                                     &compile,
                                     &execute,
                                     &release,
                                     &profile,
                                     &describe,
                                     &buffer_kind,
                                     &alloc_buffer,
                                     &free_buffer,
                                     &execute_io,
                                     &query_subgraph};
    return &table;
  }
};

}  // namespace detail
}  // namespace tessera::plugin

// Emits the entry symbol for plugin class `Class` (default-constructible, derived from
// tessera::plugin::Plugin). Use once per plugin library, at global scope.
#define TESSERA_DEFINE_PLUGIN(Class, name, version, description)                        \
  extern "C" TESSERA_PLUGIN_EXPORT const tsr_plugin* tessera_plugin_entry(              \
      uint32_t host_abi_major, uint32_t host_abi_minor) {                               \
    (void)host_abi_minor;                                                               \
    return ::tessera::plugin::detail::Host<Class>::entry(host_abi_major, name, version, \
                                                         description);                  \
  }
