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
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
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
};

namespace detail {
template <typename T>
struct Host;
}  // namespace detail

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

  static std::vector<TargetOption> to_options(const tsr_target_option* options, int32_t count) {
    std::vector<TargetOption> out;
    for (int32_t i = 0; i < count && options != nullptr; ++i) {
      out.push_back(
          {options[i].name ? options[i].name : "", options[i].value ? options[i].value : ""});
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
      std::vector<TargetOption> accepted = to_options(options, num_options);
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
      const int32_t n = std::min<int32_t>(capacity, static_cast<int32_t>(devices.size()));
      for (int32_t i = 0; i < n; ++i) {
        const DeviceInfo& d = devices[static_cast<size_t>(i)];
        tsr_device_info info{};
        info.struct_size = sizeof(tsr_device_info);
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
        out[i] = info;
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
      answer = of(instance).plugin->query(device ? device : "", RegionView(region),
                                          NodeView(region, node));
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
      const std::vector<Support> got =
          of(instance).plugin->query_subgraph(device ? device : "", RegionView(region));
      if (static_cast<int32_t>(got.size()) != region->num_nodes) {
        throw Failure(TSR_ERROR, "query_subgraph() answered " + std::to_string(got.size()) +
                                     " nodes of " + std::to_string(region->num_nodes));
      }
      for (int32_t i = 0; i < region->num_nodes; ++i) {
        const Support& a = got[static_cast<size_t>(i)];
        tsr_support& out = answers[i];
        out.supported = a.supported ? 1 : 0;
        out.preferred_layout = a.preferred_layout;
        out.cost_us = a.cost_us;
        out.fused_into = a.fused_into;
        write_message(tsr_message{out.reason, sizeof(out.reason)}, a.reason.c_str());
      }
    });
  }

  static tsr_status compile(tsr_instance instance, const char* device, const tsr_region* region,
                            const tsr_compile_options* options, tsr_region_handle* handle,
                            tsr_message message) noexcept {
    return guarded(message, [&] {
      Plugin& plugin = *of(instance).plugin;
      CompileOptions opts;
      opts.target_options = plugin.options();
      if (options != nullptr) {
        opts.num_threads = options->num_threads;
        if (options->precision) opts.precision = options->precision;
        if (options->cache_dir) opts.cache_dir = options->cache_dir;
        if (options->pack_path) opts.pack_path = options->pack_path;
        if (options->dump_dir) opts.dump_dir = options->dump_dir;
        if (options->struct_size >=
            offsetof(tsr_compile_options, profile) + sizeof(options->profile)) {
          opts.profile = options->profile != 0;
        }
        for (int32_t i = 0; i < options->num_node_configs && options->node_configs != nullptr;
             ++i) {
          const tsr_node_config& c = options->node_configs[i];
          NodeConfig config;
          config.node = c.node;
          config.schedule = c.schedule ? c.schedule : "";
          for (int32_t k = 0; k < c.num_knobs && c.knobs != nullptr; ++k) {
            config.knobs.push_back({c.knobs[k].name ? c.knobs[k].name : "", c.knobs[k].value});
          }
          opts.node_configs.push_back(std::move(config));
        }
      }
      std::unique_ptr<CompiledRegion> compiled =
          plugin.compile(device ? device : "", RegionView(region), opts);
      if (!compiled) throw Failure(TSR_COMPILE_FAILED, "compile() returned no region");
      *handle = reinterpret_cast<tsr_region_handle>(compiled.release());
    });
  }

  static tsr_status describe(tsr_instance instance, const char* device, const tsr_region* region,
                             int32_t node, tsr_node_tuning* tuning, tsr_message message) noexcept {
    return guarded(message, [&] {
      Instance& s = of(instance);
      NodeTuning answer =
          s.plugin->describe(device ? device : "", RegionView(region), NodeView(region, node));
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
      out.struct_size = sizeof(tsr_node_tuning);
      out.workload_key = d.tuning.workload_key.c_str();
      out.flops = d.tuning.flops;
      out.num_schedules = static_cast<int32_t>(d.schedules.size());
      out.schedules = d.schedules.empty() ? nullptr : d.schedules.data();
      out.default_schedule = d.tuning.default_schedule;
      *tuning = out;
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
    return guarded(message,
                   [&] { reinterpret_cast<CompiledRegion*>(handle)->execute_io(inputs, outputs); });
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
