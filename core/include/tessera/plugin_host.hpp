// The plugin host: finds libtessera-plugin-<name>.so files in absolute directories, loads them with
// Boost.DLL, checks their ABI, probes their devices, and keeps every refusal with its reason.
//
// Lifetime: a LoadedPlugin owns its library. Everything handed out by a plugin (compiled regions)
// holds a std::shared_ptr<LoadedPlugin>, so the library stays mapped until the last of them is
// gone; then shutdown() is called once and the library is unloaded. Destroying the PluginHost
// while regions are alive is therefore safe.
//
// Thread safety: a PluginHost is immutable after construction; LoadedPlugin::probe() may be
// called from any thread (calls into one plugin are serialized by a per-plugin mutex).
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

// ABI 1.1 describe_node answer, copied out of the plugin's storage.
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

class LoadedPlugin {
 public:
  // Calls shutdown() (if any) when no other host holds the same plugin library, then unloads it.
  ~LoadedPlugin();
  LoadedPlugin(const LoadedPlugin&) = delete;
  LoadedPlugin& operator=(const LoadedPlugin&) = delete;

  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  const std::string& description() const { return description_; }
  const std::string& path() const { return path_; }
  uint32_t abi_major() const { return table_->abi_major; }
  uint32_t abi_minor() const { return table_->abi_minor; }
  // Devices found by the probe at load time (default selector).
  const std::vector<PluginDeviceInfo>& devices() const { return devices_; }
  // Probes again with a per-target selector ("" = default). Device indices passed to query and
  // compile are indices into the list the most recent probe returned. Throws tessera::Error.
  std::vector<PluginDeviceInfo> probe(const std::string& selector) const;

  // The plugin's function table. Optional slots beyond the plugin's struct_size read as NULL.
  const tsr_plugin& table() const { return *table_; }
  bool has_last_profile() const;
  // ABI 1.1 describe_node slot present (a 1.0 plugin, or NULL, has nothing tunable).
  bool has_describe_node() const;
  // Calls describe_node for `node` of `region` (taking call_mutex()) and copies the answer.
  // Without the slot: an empty tuning. Throws tessera::Error with the plugin's message when it
  // fails or answers something malformed.
  PluginNodeTuning describe_node(int32_t device, const tsr_region* region, int32_t node) const;
  // The same for graph node `node` alone in a region of its own, as a tuner measures it.
  PluginNodeTuning describe_node(int32_t device, const Graph& graph, int node) const;
  // ABI 1.2: asks the plugin whether it accepts these target options. Throws tessera::Error with
  // the plugin's message when it refuses them, or when it has no check_options slot (a plugin
  // without one takes no options). No options: nothing to check.
  void check_options(const std::vector<std::pair<std::string, std::string>>& options) const;
  // Serializes calls into this plugin that the ABI does not promise to be reentrant (probe,
  // query, compile). Execution of distinct regions does not take it. One mutex per plugin
  // library in the process: every host that loads the library shares the plugin's state.
  std::mutex& call_mutex() const;

 private:
  friend class PluginHost;
  struct Library;
  struct LibraryUse;
  LoadedPlugin() = default;
  // The use record of `table`'s library, counted one more user.
  static std::shared_ptr<LibraryUse> acquire(const tsr_plugin* table);
  // Drops one use; the last one calls the plugin's shutdown (under the registry lock, so a host
  // loading the library at the same time waits and then finds it fresh).
  static void release(const tsr_plugin* table);

  std::unique_ptr<Library> library_;
  const tsr_plugin* table_ = nullptr;
  std::string name_, version_, description_, path_;
  std::vector<PluginDeviceInfo> devices_;
  // Shared with every LoadedPlugin of the same library; shutdown runs when the last one goes.
  std::shared_ptr<LibraryUse> use_;
};

// One candidate file that was not loaded.
struct PluginRefusal {
  std::string path;
  std::string name;    // from the file name (or the table, when it got that far)
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
  void load_candidate(const PluginDir& dir, const std::string& path,
                      const std::string& file_name_plugin);

  // Plugin names (from file names) in the default directories, and where each was found.
  std::map<std::string, std::string> bundled_;
  bool allow_shadowing_ = false;

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

struct RegionCompileSettings {
  int32_t num_threads = 0;  // 0 = plugin default
  std::string precision = "fp32";
  std::string cache_dir;  // "" = none
  std::string pack_path;  // "" = heuristics
  std::string dump_dir;   // absolute; "" = none (tsr_compile_options.dump_dir)
  // ABI 1.2: the target's options (tsr_compile_options.target_options), already checked.
  std::vector<std::pair<std::string, std::string>> target_options;
  // ABI 1.1: asked once per region node (after describe_node) for the config to pass in
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

// A compiled region of a graph on one plugin device. Keeps the plugin's library loaded (it holds
// a shared_ptr<LoadedPlugin>) and the constants it was given alive until it is destroyed.
// execute() must not be called from two threads at once on the same region.
class PluginRegion {
 public:
  // `nodes` are graph node indices in execution order. Throws RegionCompileError when the plugin
  // refuses, tessera::Error for bad arguments.
  static std::shared_ptr<PluginRegion> compile(std::shared_ptr<LoadedPlugin> plugin, int32_t device,
                                               const Graph& graph, const std::vector<int>& nodes,
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
  // Per-node times (us) of the last execute, or empty if the plugin does not profile.
  std::vector<double> last_profile() const;
  const LoadedPlugin& plugin() const { return *plugin_; }

 private:
  PluginRegion() = default;
  std::shared_ptr<LoadedPlugin> plugin_;
  std::unique_ptr<detail::RegionDesc> desc_;
  tsr_region_handle handle_ = nullptr;
  int32_t num_nodes_ = 0;
};

// ABI version of this core, "1.0".
std::string plugin_abi_version();

// Directories holding the install's shared data (share/tessera/<sub>, located relative to
// libtessera.so like the plugin directory) and, when running from a build tree, the source tree's
// <sub> folder. `sub` is "schedules" or "targets/devices". Whether or not they exist; origin is
// "install" or "source tree".
std::vector<PluginDir> default_data_dirs(const std::string& sub);

}  // namespace tessera
