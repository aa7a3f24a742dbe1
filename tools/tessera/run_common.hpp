// Pieces shared by `run`, `bench` and `plan`: input loading/generation and the runner that
// executes a graph on the chosen targets.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/deploy_config.hpp"
#include "tessera/graph.hpp"
#include "tessera/package.hpp"
#include "tessera/session.hpp"

namespace tessera::cli {

// Reads `NAME=FILE.npy` specs; inputs not given get seeded random data (normal(0,1) for floats,
// small non-negative integers otherwise). Prints the seed when it generates anything. Errors name
// the input and file.
std::map<std::string, Tensor> load_or_generate_inputs(const Graph& graph,
                                                      const std::vector<std::string>& specs,
                                                      uint64_t seed);

// A value name made safe as a file name (path separators and odd characters become '_').
std::string safe_file_name(const std::string& name);

// One distinct, safe file name per graph output ("<name>.npy"): safe_file_name, cut to a length
// every file system takes, and made unique ignoring case (two outputs "a/b" and "a_b", or "X"
// and "x" on a case-insensitive file system, would otherwise overwrite each other) by adding
// ".2", ".3", ... before ".npy". Each rename is described in `notes` for the user to see.
std::vector<std::string> output_file_names(const std::vector<std::string>& value_names,
                                           std::vector<std::string>& notes);

// What `run`, `bench` and `plan` execute: a model file, or a deployment YAML naming the model (or
// a zoo network, generated into the cache directory on first use), its targets and options.
// $XDG_CACHE_HOME/tessera, ~/.cache/tessera, or a temp dir when there is no home.
std::string default_cache_dir();

struct Workload {
  Graph graph;
  std::string model_path;  // the ONNX file (or package) the graph came from
  // Set when the workload is a package (.tsp): sessions run it as compiled (make_session).
  std::shared_ptr<const Package> package;
  bool replan_package = false;       // --replan
  std::vector<std::string> targets;  // "plugin[:device]" in priority order
  int32_t threads = 0;  // --threads: every target (over the deployment's per-target threads)
  // The deployment's per-target `threads:` and `options:`, keyed by the entry of `targets`.
  std::map<std::string, TargetSettings> target_settings;
  std::string precision = "fp32";
  std::vector<std::string> plugin_dirs;
  bool allow_plugin_shadowing = false;  // the deployment's allow_plugin_shadowing
  std::string cache_dir;
  PackMode pack_mode = PackMode::kAuto;  // the deployment's `packs:`, or --pack / --no-packs
  std::vector<std::string> pack_files;
  // The deployment's trusted_keys:, or --trusted-key (key texts, "ed25519:<hex>").
  std::vector<std::string> trusted_keys;
  int32_t min_island_nodes = 1;  // the deployment's partition: section
  bool allow_fallback = false;   // the deployment's partition.allow_fallback, or --allow-fallback
  bool profile_nodes = false;    // bench --profile / --trace read per-node times
  MixedPrecisionSettings mixed_precision;  // the deployment's mixed_precision:, --mixed-precision
  std::string description;  // "deployment configs/default.yaml (model ...)" for the header line
  // The input shapes the graph was imported with: --input-shape, then the deployment's inputs.
  std::map<std::string, Shape> input_shapes;
};

// True for a path ending in .yaml / .yml.
bool is_deployment_file(const std::string& path);

class Args;
// The options run, bench, plan and compile share, applied to `workload` where given:
// --plugin-dir, --pack / --no-packs, --precision, --mixed-precision, --allow-fallback, --replan.
void apply_model_options(Workload& workload, const Args& args);

// The session for a workload: its package as compiled, or its graph planned anew.
std::unique_ptr<Session> make_session(Workload& workload, const SessionOptions& options);

// PATH ending in .yaml/.yml is a deployment; anything else an ONNX model. `targets_override`
// (from --targets, may be "") replaces the deployment's targets. `input_shapes` fixes symbolic
// dims (a deployment's `inputs:` do the same).
Workload load_workload(const std::string& path, const std::string& targets_override,
                       const std::map<std::string, Shape>& input_shapes);

// The pack mode --pack FILE (repeatable: exactly these packs) and --no-packs (heuristics only)
// ask for, or nullopt when neither was given. Giving both is an error.
std::optional<PackMode> pack_mode_from_options(const std::vector<std::string>& pack_files,
                                               bool no_packs);
// Applies them to a workload (over the deployment's `packs:`).
void apply_pack_options(Workload& workload, const std::vector<std::string>& pack_files,
                        bool no_packs);

// --allow-fallback: a named target that cannot run is skipped, and a region that fails to compile
// moves to the next target, with a warning, instead of being an error (as the deployment's
// partition.allow_fallback: true). Without the flag the deployment's setting holds.
void apply_fallback_option(Workload& workload, bool allow_fallback);

// --precision fp32|fp16|fp16-acc32 over the deployment's `precision:` ("" = keep).
void apply_precision_option(Workload& workload, const std::string& precision);
// --mixed-precision: the mixed-precision pass with the default lists (a deployment's
// `mixed_precision:` lists stay); `enable` false keeps the deployment's setting.
void apply_mixed_precision_option(Workload& workload, bool enable);

// The Session options a workload asks for (targets, threads, precision, plugin dirs, packs).
SessionOptions session_options(const Workload& workload);

// The plan as JSON members (no braces), everything `plan` and `run` show as text but the
// per-node rows: "model", "precision", "targets" (resolved, with their devices), "packs" (per
// target: file, level, family, reason, notes), "regions" (plugin, device, node count, estimate,
// host values), "nodes_by_plugin", "warnings". For `plan --json` and `bench --json`.
std::string plan_json_members(const ExecutionPlan& plan, const std::string& model,
                              const std::string& precision);

// Plugin name -> number of the plan's graph nodes placed on it, and the same as one line of text
// ("cpu=120 reference=3") for `plan` and `run`.
// Nodes the mixed-precision pass kept in fp32 in a `precision` (fp16...) session: their names,
// and "3 of 120 (Softmax x2, ReduceMean x1)" / "none (every node runs fp16)".
std::vector<std::string> fp32_nodes(const ExecutionPlan& plan, const std::string& precision);
std::string fp32_nodes_text(const ExecutionPlan& plan, const std::string& precision);
std::map<std::string, int> nodes_per_plugin(const ExecutionPlan& plan);
std::string nodes_per_plugin_text(const ExecutionPlan& plan);

// Executes a prepared graph on the workload's targets.
class Runner {
 public:
  explicit Runner(Workload workload);
  ~Runner();
  std::vector<Tensor> run(const std::map<std::string, Tensor>& inputs);
  // Prints the targets, their packs and the node counts per plugin, then the warnings.
  // kNormal: the nodes that did not land on the first target, grouped by op with a reason;
  // kVerbose: every node, full pack reasons, and the notes about packs of other devices;
  // kQuiet: the warnings only.
  enum class Verbosity { kQuiet, kNormal, kVerbose };
  void print_placement(Verbosity verbosity = Verbosity::kNormal) const;
  // Plugin name -> number of graph nodes placed on it.
  std::map<std::string, int> nodes_per_plugin() const;
  const Graph& graph() const;
  const ExecutionPlan& plan() const;
  // Plans the session holds, one per input signature it has run (Session::plans_held).
  int plans_held() const;
  // Per-region (and, where the plugin profiles, per-node) times of the last run().
  std::vector<RegionProfile> profile() const;
  // Counters of the last run(): bytes copied host<->device, regions run at once.
  RunStats last_run_stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::cli
