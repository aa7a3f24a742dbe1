// The plugin host: finds libtessera-plugin-<name>.so files in absolute directories, loads them with
// Boost.DLL, checks their ABI and that their table gives the name their file gives, probes their
// devices, and keeps every refusal with its reason.
//
// Text from plugins: names and device ids are identifiers ([A-Za-z0-9._-], checked); every other
// string a plugin hands over (version, description, device names, messages) is kept with its
// control characters escaped (tessera::escaped), since it ends up printed in `tessera info`,
// plans and errors.
//
// Lifetime: a LoadedPlugin owns its library; a PluginInstance (one per target, session or tuner
// worker) owns one plugin instance and holds its LoadedPlugin; a compiled region holds its
// PluginInstance. So the instance is destroyed after its last region is released, and the library
// stays mapped until its last instance is gone. Destroying the PluginHost while regions are alive
// is therefore safe.
//
// Thread safety: a PluginHost is immutable after construction. The configuration calls of one
// PluginInstance (probe, query, describe, compile) are serialized by its own mutex; distinct
// instances of one plugin are called concurrently (the ABI forbids plugin state outside
// instances).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/graph.hpp"
#include "tessera/pack.hpp"
#include "tessera/plugin_abi.h"

namespace tessera {
namespace detail {
class RegionDesc;
}

struct PluginDeviceInfo {
  std::string id;  // stable, chosen by the plugin (tsr_device_info::id)
  std::string vendor;
  std::string name;
  std::string driver_version;
  std::string kind;  // "cpu", "gpu", "npu"
  int32_t compute_units = 0;
  int64_t memory_bytes = 0;
  std::string features;
  int32_t score = 0;  // 0 = unusable
  std::string unusable_reason;
};

// A describe_node answer, copied out of the plugin's storage.
struct PluginKnobSpace {
  std::string name;
  std::vector<int64_t> values;  // candidates
  int64_t default_value = 0;    // the heuristic's choice for the node
};
struct PluginSchedule {
  std::string name;
  std::vector<PluginKnobSpace> knobs;
};
struct PluginNodeTuning {
  std::string workload_key;
  double flops = 0.0;
  std::vector<PluginSchedule> schedules;  // empty = nothing tunable
  int32_t default_schedule = 0;
  const PluginSchedule* find_schedule(const std::string& name) const {
    for (const PluginSchedule& s : schedules) {
      if (s.name == name) return &s;
    }
    return nullptr;
  }
};

using TargetOptions = std::vector<std::pair<std::string, std::string>>;
class PluginInstance;

class LoadedPlugin : public std::enable_shared_from_this<LoadedPlugin> {
 public:
  // Unloads the library (its instances are gone: each holds its LoadedPlugin).
  ~LoadedPlugin();
  LoadedPlugin(const LoadedPlugin&) = delete;
  LoadedPlugin& operator=(const LoadedPlugin&) = delete;

  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  const std::string& description() const { return description_; }
  const std::string& path() const { return path_; }
  uint32_t abi_major() const { return table_->abi_major; }
  uint32_t abi_minor() const { return table_->abi_minor; }
  // Devices found at load time (an instance without options, default selector).
  const std::vector<PluginDeviceInfo>& devices() const { return devices_; }
  // A new instance configured by a target's options. Throws tessera::Error with the plugin's
  // message when it refuses them (naming the option).
  std::shared_ptr<PluginInstance> create_instance(const TargetOptions& options = {});
  // Probes with `selector` ("" = default) in a fresh instance without options. Throws
  // tessera::Error.
  std::vector<PluginDeviceInfo> probe(const std::string& selector);

  // The plugin's function table. Optional slots beyond the plugin's struct_size read as NULL.
  const tsr_plugin& table() const { return *table_; }
  bool has_last_profile() const;
  bool has_describe_node() const;

 private:
  friend class PluginHost;
  struct Library;
  LoadedPlugin() = default;

  std::unique_ptr<Library> library_;
  const tsr_plugin* table_ = nullptr;
  std::string name_, version_, description_, path_;
  std::vector<PluginDeviceInfo> devices_;
};

// One plugin instance (tsr_plugin::create): a target's devices, options and caches, apart from
// every other instance of the same plugin.
class PluginInstance {
 public:
  ~PluginInstance();
  PluginInstance(const PluginInstance&) = delete;
  PluginInstance& operator=(const PluginInstance&) = delete;

  const std::string& name() const { return plugin_->name(); }
  const LoadedPlugin& plugin() const { return *plugin_; }
  const tsr_plugin& table() const { return plugin_->table(); }
  tsr_instance handle() const { return handle_; }
  const TargetOptions& options() const { return options_; }
  bool has_last_profile() const { return plugin_->has_last_profile(); }
  bool has_describe_node() const { return plugin_->has_describe_node(); }
  // ABI 2.2 query_subgraph slot present.
  bool has_query_subgraph() const;

  // Probes with a target's selector ("" = default). Throws tessera::Error when the probe fails or
  // answers something malformed (bad or duplicate device ids).
  std::vector<PluginDeviceInfo> probe(const std::string& selector) const;
  // Calls describe_node for `node` of `region` on device `device` and copies the answer. Without
  // the slot: an empty tuning. Throws tessera::Error with the plugin's message when it fails or
  // answers something malformed.
  PluginNodeTuning describe_node(const std::string& device, const tsr_region* region,
                                 int32_t node) const;
  // The same for graph node `node` alone in a region of its own, as a tuner measures it.
  PluginNodeTuning describe_node(const std::string& device, const Graph& graph, int node) const;
  // Serializes this instance's configuration calls (probe, query, describe, compile); the ABI
  // does not promise they are reentrant. Execution of regions does not take it.
  std::mutex& call_mutex() const { return calls_; }

  // ABI 2.1: the memory domain of `device` ("" = host memory only, or a plugin without the
  // buffer slots). Regions of devices of one domain hand values over in buffers of it.
  std::string buffer_domain(const std::string& device) const;
  // A buffer of `bytes` in the device's domain; throws tessera::Error with the plugin's message.
  tsr_buffer alloc_buffer(const std::string& device, uint64_t bytes) const;
  void free_buffer(tsr_buffer buffer) const;

 private:
  friend class LoadedPlugin;
  PluginInstance() = default;
  std::shared_ptr<LoadedPlugin> plugin_;
  tsr_instance handle_ = nullptr;
  TargetOptions options_;
  mutable std::mutex calls_;
};

// One candidate file that was not loaded. Text to show: control characters are escaped in all
// three (file names and plugin answers may hold ESC or newlines).
struct PluginRefusal {
  std::string path;
  std::string name;    // from the file name, libtessera-plugin-<name>.so
  std::string reason;  // "not a plugin: no entry symbol 'tessera_plugin_entry'", ...
};

// One directory considered for the search.
struct PluginDir {
  std::string path;
  std::string origin;  // "install", "build tree", "caller", "TESSERA_PLUGIN_PATH"
  std::string status;  // "searched (2 candidates)", "not found", "refused: relative path"
};

struct PluginHostOptions {
  // Extra absolute directories (e.g. from a deployment YAML), searched before the defaults.
  std::vector<std::string> dirs;
  // Search TESSERA_PLUGIN_PATH (colon-separated absolute directories).
  bool use_environment = true;
  // Search the install's plugin directory (relative to libtessera.so) and, when running from a
  // build tree, <build>/plugins/lib.
  bool use_default_dirs = true;
  // A plugin found on TESSERA_PLUGIN_PATH whose name is also a bundled plugin's (one in the
  // default directories) is refused unless this is set (a deployment's
  // `allow_plugin_shadowing: true`): an environment variable alone must not silently replace the
  // code a deployment was tested with.
  bool allow_shadowing = false;
  // Non-empty: load only the plugins of these names (by file name, libtessera-plugin-NAME.so),
  // so a session that knows its targets (a package's) neither loads nor probes the others.
  std::vector<std::string> only;
};

class PluginHost {
 public:
  // Searches and loads at once. Never throws for a bad plugin: it becomes a refusal.
  explicit PluginHost(const PluginHostOptions& options = {});

  const std::vector<PluginDir>& dirs() const { return dirs_; }
  // Loaded plugins in discovery order.
  const std::vector<std::shared_ptr<LoadedPlugin>>& plugins() const { return plugins_; }
  const std::vector<PluginRefusal>& refusals() const { return refusals_; }
  // nullptr if no plugin of that name was loaded.
  std::shared_ptr<LoadedPlugin> find(const std::string& name) const;

  // The directories searched by default (for `tessera info`), whether or not they exist.
  static std::vector<PluginDir> default_dirs();

 private:
  void search_dir(const PluginDir& dir);
  // `name` is the plugin name its file name gives; the plugin's table must give the same.
  void load_candidate(const PluginDir& dir, const std::string& path, const std::string& name);

  // Plugin names (from file names) in the default directories, and where each was found.
  std::map<std::string, std::string> bundled_;
  bool allow_shadowing_ = false;
  std::vector<std::string> options_only_;  // PluginHostOptions::only

  std::vector<PluginDir> dirs_;
  std::vector<std::shared_ptr<LoadedPlugin>> plugins_;
  std::vector<PluginRefusal> refusals_;
};

// A config core chose for one node: schedule name and one value per knob.
struct NodeConfigChoice {
  std::string schedule;
  std::vector<Knob> knobs;
};

// What core knows about one node when choosing its config at compile time.
struct NodeConfigRequest {
  int graph_node = -1;                       // index into graph.nodes
  int region_node = -1;                      // index into the region's nodes
  const PluginNodeTuning* tuning = nullptr;  // nullptr: no describe_node slot, or it failed
  std::string describe_error;                // why describe_node failed ("" = it did not)
};

// The most threads a region may be compiled with. The CLI (--threads), the C API
// (options.threads), deployment YAML (targets[].threads) and the package reader refuse more: no
// device has that many cores, and plugins size per-thread state by the count.
constexpr int32_t kMaxThreads = 1024;

struct RegionCompileSettings {
  int32_t num_threads = 0;  // 0 = plugin default, else 1..kMaxThreads
  std::string precision = "fp32";
  std::string cache_dir;  // "" = none
  std::string pack_path;  // "" = heuristics
  std::string dump_dir;   // absolute; "" = none (tsr_compile_options.dump_dir)
  bool profile = false;   // tsr_compile_options.profile: last_profile() will be read
  // Asked once per region node (after describe_node) for the config to pass in
  // tsr_compile_options.node_configs; nullopt = the plugin's heuristic. Unset = no configs and no
  // describe_node calls.
  std::function<std::optional<NodeConfigChoice>(const NodeConfigRequest&)> choose_config;
};

// Raised when a plugin's compile_region returns non-OK; the session falls back on it.
class RegionCompileError : public Error {
 public:
  RegionCompileError(const std::string& message, tsr_status status)
      : Error(message), status(status) {}
  tsr_status status;
};

// A compiled region of a graph on one plugin device. Keeps its plugin instance (and so the
// library) alive and the constants it was given alive until it is destroyed.
// execute() must not be called from two threads at once on the same region.
class PluginRegion {
 public:
  // `nodes` are graph node indices in execution order. Throws RegionCompileError when the plugin
  // refuses, tessera::Error for bad arguments.
  static std::shared_ptr<PluginRegion> compile(std::shared_ptr<PluginInstance> instance,
                                               const std::string& device, const Graph& graph,
                                               const std::vector<int>& nodes,
                                               const RegionCompileSettings& settings);
  ~PluginRegion();
  PluginRegion(const PluginRegion&) = delete;
  PluginRegion& operator=(const PluginRegion&) = delete;

  // Graph value ids whose host buffers execute() takes, in order.
  const std::vector<ValueId>& input_values() const;
  const std::vector<ValueId>& output_values() const;
  // Buffers are dense row-major host memory of each value's dtype and shape. Throws Error with the
  // plugin's message on failure.
  void execute(const void* const* inputs, void* const* outputs);
  // The same with each input and output in host memory or in a buffer of the device's domain
  // (ABI 2.1 execute_region_io; only for plugins whose instance has a buffer domain).
  void execute(const tsr_io* inputs, const tsr_io* outputs);
  // Per-node times (us) of the last execute, or empty if the plugin does not profile.
  std::vector<double> last_profile() const;
  const LoadedPlugin& plugin() const { return instance_->plugin(); }

 private:
  PluginRegion() = default;
  std::shared_ptr<PluginInstance> instance_;
  std::unique_ptr<detail::RegionDesc> desc_;
  tsr_region_handle handle_ = nullptr;
  int32_t num_nodes_ = 0;
};

// ABI version of this core, "2.0".
std::string plugin_abi_version();

// Directories holding the install's shared data (share/tessera/<sub>, located relative to
// libtessera.so like the plugin directory) and, when running from a build tree, the source tree's
// <sub> folder. `sub` is "schedules" or "targets/devices". Whether or not they exist; origin is
// "install" or "source tree".
std::vector<PluginDir> default_data_dirs(const std::string& sub);

}  // namespace tessera
