// Session: runs a prepared graph across target plugins. At construction it loads plugins,
// resolves the targets, asks each plugin per node what it can run, partitions the graph into
// regions (merging small islands back when boundary transfers cost more than they save),
// compiles every region (falling back to the next target when a compile fails), and plans host
// buffers for the values crossing region boundaries, reusing memory by liveness.
//
// Shapes decided at run time: the graph given keeps its unprepared form (Graph::unprepared), so a
// run whose inputs differ in a dimension the model leaves open (a symbolic batch), or that brings
// new values for inputs that decide shapes (Graph::value_inputs: a Reshape's shape, Resize's
// sizes fed at run time), prepares the graph again for those inputs, plans and compiles it, and
// keeps the plan per input signature (SessionOptions::plan_cache_size), as MNN's resize does.
//
// Execution: the regions of a plan form a dependency graph (a region waits for the regions that
// produce its inputs, and for the previous region on the same target device, which runs one
// region at a time); regions on different devices whose inputs are ready run at once, as oneTBB
// tasks. A plan without two such regions runs on the calling thread alone.
//
// Thread safety: a Session may be shared between threads. run() calls overlap: each takes the
// plan for its inputs under a short internal lock (planning anew under it on a plan-cache miss),
// then runs with boundary buffers of its own (a set per run in flight, kept by the plan for the
// next run), and holds only a per-region lock while a region executes, since a plugin never runs
// one compiled region twice at once; so runs of one plan overlap in different regions only (they
// pipeline through its regions; a plan of one region runs one call at a time), and runs of
// different plans overlap fully. A plan in use stays alive while another call re-plans and the
// cache drops it. profile() and last_run_stats() are those of the run that finished last, copied
// under the lock. plan() and graph() describe the plan of the latest run to start (the first
// plan before any); a reference stays valid until a run plans for other inputs while that plan
// is dropped.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/deploy_config.hpp"  // PackMode: auto | files | none
#include "tessera/graph.hpp"
#include "tessera/mixed_precision.hpp"
#include "tessera/plugin_host.hpp"

namespace tessera {

struct Package;

// Settings of one target that only its plugin sees (a deployment's per-target `threads:` and
// `options:`).
struct TargetSettings {
  int32_t threads = 0;                                       // 0 = SessionOptions::threads
  std::vector<std::pair<std::string, std::string>> options;  // name, value; checked by the plugin
  std::string origin;  // where they come from, for errors: "app.yaml:7: targets[1]"
};

struct SessionOptions {
  // Priority order, each "plugin[:device-selector]", e.g. {"mali:any", "reference"}. Empty = every
  // loaded plugin with a usable device, best device score first, `reference` last.
  std::vector<std::string> targets;
  // Extra absolute plugin directories (searched before TESSERA_PLUGIN_PATH and the defaults).
  std::vector<std::string> plugin_dirs;
  bool use_plugin_environment = true;   // search TESSERA_PLUGIN_PATH
  bool use_default_plugin_dirs = true;  // search the install / build-tree plugin directories
  // Let a plugin on TESSERA_PLUGIN_PATH replace a bundled one of the same name (see
  // PluginHostOptions::allow_shadowing).
  bool allow_plugin_shadowing = false;
  int32_t threads = 0;  // 0 = each plugin's default
  // Keyed by an entry of `targets` as written there ("cpu", "mali:any").
  std::map<std::string, TargetSettings> target_settings;
  std::string precision = "fp32";  // "fp32", "fp16", "fp16-acc32"
  std::string cache_dir;           // absolute; "" = no kernel cache
  // Islands of fewer nodes than this merge back into a neighbouring target (1 = by cost only).
  int32_t min_island_nodes = 1;
  // false (the default): a target named in `targets` that has no usable device, or a region that
  // fails to compile on a named target (a precision it cannot honour, a driver failure), is an
  // error naming the target and the reason. true: such a target is skipped, or its region moves
  // to the next target, with a warning in the plan. With `targets` empty (every usable plugin)
  // nothing was named, so both are warnings.
  bool allow_fallback = false;
  // Plans kept, one per input signature (input shapes, and the values of inputs that decide
  // shapes); the least recently used is dropped beyond this. Only the plan of the latest run to
  // start keeps boundary buffers between runs (a set per run it had in flight at once).
  int32_t plan_cache_size = 8;
  // Absolute; "" = none. Plugins that build kernel programs write their sources there (one
  // <kernel>.cl per program, never replacing a different file of the same name).
  std::string dump_kernels_dir;
  // Per-node times in profile(): with false (the default) plugins may skip what timing each node
  // costs (an OpenCL event per launch), and RegionProfile::node_times_us may be empty.
  bool profile_nodes = false;
  // With precision fp16 / fp16-acc32: run only the nodes the mixed-precision pass picks
  // (tessera/mixed_precision.hpp) in it and keep the rest fp32, regions split where it changes.
  // Enabled with precision fp32 it is an error (it would change nothing).
  MixedPrecisionSettings mixed_precision;

  // Where tuned configs come from (see schedules/README.md): kAuto = the most specific pack per
  // device among those in the schedules directories; kFiles = exactly `pack_files` (still matched
  // against each device, others ignored with a warning; a bad file is an error); kNone = the
  // schedules' heuristics only.
  PackMode pack_mode = PackMode::kAuto;
  std::vector<std::string> pack_files;
  // kAuto: schedules directories (each holding <plugin>/*.yaml), searched before
  // TESSERA_SCHEDULES_PATH (colon-separated) and the defaults (the install's
  // share/tessera/schedules, and the source tree's schedules/ when running from a build tree).
  std::vector<std::string> schedules_dirs;
  // Device-family descriptor directories (targets/devices), searched before the defaults; a
  // family id found earlier wins over the same id later.
  std::vector<std::string> device_family_dirs;
  bool use_schedules_environment = true;  // read TESSERA_SCHEDULES_PATH
  bool use_default_data_dirs = true;      // the install / source-tree schedules and devices
  // A session made from a package whose targets differ from those at hand (another device or
  // driver, a plugin of another version, another engine): false (the default) refuses with the
  // reason; true plans the package's graph again for the devices here, as an ONNX model would
  // be, with a warning in the plan.
  bool replan_package = false;
  // Public keys ("ed25519:<hex>", or absolute paths of .pub files; tessera/integrity.hpp). Empty
  // (the default): content hashes are checked, signatures are not required. Given: a package
  // this session is made from, and every pack it reads, must carry a valid signature by one of
  // them; a package is refused with the reason, a schedules-directory pack is left out with a
  // warning in the plan, a `pack_files` pack is an error.
  std::vector<std::string> trusted_keys;
};

// The pack chosen for one target device, and why.
struct DevicePackPlan {
  std::string target;  // "mali:any"
  std::string plugin;
  std::string device;
  std::string family;         // matched family id, "" = none
  std::string family_reason;  // why this family (or none)
  std::string pack_file;      // "" = none: the schedules' heuristics
  std::string level;          // "device+driver", "device", "family", "vendor", "none"
  std::string reason;
  std::vector<std::string> warnings;  // candidates ignored and why (PackSelection::warnings)
  std::vector<std::string> notes;     // packs for other devices (PackSelection::notes)
};

// The family and pack a Session with `options` would choose for `device` of `plugin` (for
// `tessera info`). Throws tessera::Error for a bad --pack file.
DevicePackPlan preview_device_pack(const std::string& plugin, const PluginDeviceInfo& device,
                                   const SessionOptions& options);

// "mali:any,reference" -> {"mali:any", "reference"}; blanks dropped. Throws tessera::Error for
// an entry with options (parse_target_entries reads those).
std::vector<std::string> parse_target_list(const std::string& list);

// One entry of a `--targets` list: "plugin[:device]" and the target's options in brackets, the
// command line's form of a deployment target's `options:`.
struct TargetListEntry {
  std::string spec;                                          // "mali:any"
  std::vector<std::pair<std::string, std::string>> options;  // name, value, as written
};
// "mali:any[layout=nchw,build_options=-DX],reference" -> {{"mali:any", {{"layout", "nchw"},
// {"build_options", "-DX"}}}, {"reference", {}}}; commas inside brackets separate options, so a
// value cannot hold ',' or ']' (write such a value in a deployment YAML). Blanks are dropped.
// Throws tessera::Error naming the entry for an unclosed bracket, text after it, an option
// without '=' or with an empty name, or a name given twice.
std::vector<TargetListEntry> parse_target_entries(const std::string& list);

struct NodePlacement {
  std::string node;
  std::string op_type;
  std::string plugin;
  std::string device;
  int region = -1;
  // "mali: unsupported: op Resize not implemented -> reference: supported, est 3.1 us"
  std::string reason;
  // The estimate on the chosen target and its parts: "61 us: compute 5.2 us (2.1 GFLOP at
  // 115 GFLOP/s), memory 60 us (1.2 MB at 20 GB/s), launch 2 us [x86-64-cpu]".
  std::string estimate;
  double estimate_us = 0.0;
  // Where the node's schedule config came from: "relu.blocked{block=4} from pack FILE (device
  // match)" or "heuristic (no pack entry for workload '...')".
  std::string config;
  // The precision the node's region was compiled at: the session's, or "fp32" where the
  // mixed-precision pass kept it there.
  std::string precision;
  // The target entry it runs on, as resolved ("mali:any"), and the config core passed to the
  // plugin for it (schedule "" = none: the plugin's heuristic).
  std::string target;
  NodeConfigChoice config_choice;
};

struct RegionPlacement {
  int id = -1;
  std::string plugin;
  std::string device;
  std::vector<std::string> nodes;
  std::vector<std::string> inputs;   // values read from host buffers
  std::vector<std::string> outputs;  // values written to host buffers
  double estimated_us = 0.0;
  std::string precision;  // what the region was compiled at
};

// A plan warns when more than this share of its estimated time, and at least
// kReferenceWarningMinUs of it, runs on the reference plugin although another target was usable
// (a few microseconds of small ops there are not worth a warning).
inline constexpr double kReferenceShareWarning = 0.5;
inline constexpr double kReferenceWarningMinUs = 1000.0;

struct ExecutionPlan {
  std::vector<std::string> targets;      // resolved: "mali:any -> Mali-G78 (score 80)"
  std::vector<NodePlacement> nodes;      // graph node order
  std::vector<RegionPlacement> regions;  // execution order
  std::vector<DevicePackPlan> packs;     // per resolved target, in target order
  std::vector<std::string> warnings;     // fallbacks, skipped targets, refused pack entries
  // The inputs this plan was prepared for: "x: float32 [4, 3, 224, 224]; shape: int64 [2] = 4,-1".
  std::string input_signature;
  // Inputs whose values decide shapes ("'shape', 'sizes'"), "" for none: each new set of values
  // is prepared and planned again.
  std::string value_inputs;
  // 1 for the first plan a Session makes, 2 for the next, ...; a run that reuses a cached plan
  // keeps its number. 0 before the first plan.
  int plan_number = 0;
  int boundary_values = 0;  // values living in buffers between regions (host or device)
  int buffers = 0;          // buffers they share after liveness reuse
  size_t buffer_bytes = 0;
  // Of those, the values that stay in a device's memory domain (ABI 2.1 buffer kinds): producer
  // and every consumer share the domain, so they never cross the host; and their buffers.
  int device_values = 0;
  int device_buffers = 0;
  size_t device_buffer_bytes = 0;
};

struct RegionProfile {
  int region = -1;
  std::string plugin;
  double time_us = 0.0;  // wall time of execute(), last run
  // When execute() began, after the run began; regions that ran at once have intersecting
  // [start_us, start_us + time_us) intervals.
  double start_us = 0.0;
  std::vector<double> node_times_us;  // from the plugin, if it profiles (region node order)
};

// Counters of one run.
struct RunStats {
  // Bytes of the values entering and leaving regions whose device has memory of its own (all
  // boundary buffers are host memory, so such a region copies them host<->device): the sum over
  // those regions of their inputs' and outputs' sizes. 0 when every region works on host memory
  // (the cpu and reference plugins).
  int64_t host_device_bytes = 0;
  // The most regions executing at the same moment (1 for one region at a time, 0 for no region).
  int max_regions_in_flight = 0;
  // Wall time during which two or more regions executed at once.
  double overlap_us = 0.0;
};

class Session {
 public:
  // Loads plugins as `options` say. Throws tessera::Error naming the target or node when the
  // graph cannot be placed.
  explicit Session(Graph graph, const SessionOptions& options = {});
  // Uses an existing plugin host (options.plugin_dirs etc. are then ignored).
  Session(Graph graph, const SessionOptions& options, std::shared_ptr<const PluginHost> host);
  // Runs a package (tessera/package.hpp) where it says and with its configs, loading only the
  // plugins it names. options.targets must be empty or the package's; its precision and its
  // targets' threads and options are the package's unless options set them. Throws
  // tessera::Error naming the package and the reason when its targets cannot be honoured (see
  // SessionOptions::replan_package).
  Session(const Package& package, const SessionOptions& options = {});
  Session(const Package& package, const SessionOptions& options,
          std::shared_ptr<const PluginHost> host);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // `inputs` maps graph input names to tensors matching the graph's dtypes and shapes. Returns
  // the graph outputs in graph.outputs order (fresh tensors, owned by the caller).
  std::vector<Tensor> run(const std::map<std::string, Tensor>& inputs);
  const ExecutionPlan& plan() const;
  // Times of the last run(); empty before the first.
  std::vector<RegionProfile> profile() const;
  // Counters of the last run(); zeros before the first.
  RunStats last_run_stats() const;
  const Graph& graph() const;
  const PluginHost& plugin_host() const;
  // Plans the session holds now, one per input signature (at most
  // SessionOptions::plan_cache_size); 0 before the first plan of a graph planned at its first run.
  int plans_held() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera
