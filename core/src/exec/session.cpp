// Session: target resolution, pack selection per target device, partition + compile with
// fallback (passing each node's tuned config), the regions' dependency graph, boundary buffer
// planning by liveness, and execution of independent regions at once (see session.hpp).
#include "tessera/session.hpp"

#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "partition/partitioner.hpp"
#include "plugins/pack_apply.hpp"
#include "tessera/error.hpp"
#include "tessera/package.hpp"
#include "exec/stages.hpp"
#include "passes/infer_and_fold.hpp"
#include "tessera/passes.hpp"

namespace tessera {

namespace {

std::string trimmed(const std::string& text) {
  const size_t b = text.find_first_not_of(" \t");
  const size_t e = text.find_last_not_of(" \t");
  return b == std::string::npos ? "" : text.substr(b, e - b + 1);
}

// "layout=nchw,build_options=-DX" of `entry` -> name/value pairs.
std::vector<std::pair<std::string, std::string>> parse_entry_options(const std::string& text,
                                                                     const std::string& entry) {
  std::vector<std::pair<std::string, std::string>> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = trimmed(item);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string name = trimmed(item.substr(0, eq));
    if (eq == std::string::npos || name.empty()) {
      throw Error("--targets entry '" + entry + "': option '" + item +
                  "' is not name=value (e.g. mali:any[layout=nchw])");
    }
    for (const auto& [seen, value] : out) {
      if (seen == name)
        throw Error("--targets entry '" + entry + "': option '" + name + "' is given twice");
    }
    out.emplace_back(name, trimmed(item.substr(eq + 1)));
  }
  return out;
}

}  // namespace

std::vector<TargetListEntry> parse_target_entries(const std::string& list) {
  std::vector<TargetListEntry> out;
  size_t start = 0;
  while (start <= list.size()) {
    // An entry ends at the first comma outside brackets.
    size_t end = start;
    bool open = false;
    while (end < list.size() && (open || list[end] != ',')) {
      if (list[end] == '[') open = true;
      if (list[end] == ']') open = false;
      ++end;
    }
    const std::string entry = trimmed(list.substr(start, end - start));
    start = end + 1;
    if (entry.empty()) continue;
    TargetListEntry e;
    const size_t bracket = entry.find('[');
    e.spec = trimmed(entry.substr(0, bracket));
    if (bracket != std::string::npos) {
      const size_t close = entry.find(']', bracket);
      if (close == std::string::npos) {
        throw Error("--targets entry '" + entry + "': '[' has no closing ']'");
      }
      if (close + 1 != entry.size()) {
        throw Error("--targets entry '" + entry + "': text after the options' ']'");
      }
      e.options = parse_entry_options(entry.substr(bracket + 1, close - bracket - 1), entry);
    }
    if (e.spec.empty()) throw Error("--targets entry '" + entry + "' names no plugin");
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<std::string> parse_target_list(const std::string& list) {
  std::vector<std::string> out;
  for (const TargetListEntry& e : parse_target_entries(list)) {
    if (!e.options.empty()) {
      throw Error("target '" + e.spec + "': options ('[...]') are not accepted here");
    }
    out.push_back(e.spec);
  }
  return out;
}

namespace {

using partition::Target;

// A value input's elements for a plan's signature: exact (floats to 9 digits, which round-trip).
std::string tensor_values_text(const Tensor& t) {
  std::string text;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (i) text += ",";
    if (t.dtype() == DType::kFloat32 || t.dtype() == DType::kFloat16) {
      char number[32];
      std::snprintf(number, sizeof(number), "%.9g", t.scalar_as_double(i));
      text += number;
    } else {
      text += std::to_string(t.scalar_as_int64(i));
    }
  }
  return text;
}

// Picks the device of `plugin` matching `selector`: the best score > 0.
std::vector<Target> resolve_targets(const PluginHost& host, const SessionOptions& options,
                                    ExecutionPlan& plan) {
  std::vector<std::string> specs = options.targets;
  const bool named = !specs.empty();
  if (specs.empty()) {
    // Default: every usable plugin by its best device score, reference last.
    std::vector<std::pair<int, std::string>> ranked;
    for (const auto& p : host.plugins()) {
      int best = 0;
      for (const PluginDeviceInfo& d : p->devices()) best = std::max(best, d.score);
      if (best > 0) ranked.push_back({p->name() == "reference" ? -1 : best, p->name()});
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& r : ranked) specs.push_back(r.second);
  }
  std::vector<Target> targets;
  for (const std::string& spec : specs) {
    const size_t colon = spec.find(':');
    const std::string name = spec.substr(0, colon);
    const std::string selector = colon == std::string::npos ? "" : spec.substr(colon + 1);
    std::shared_ptr<LoadedPlugin> plugin = host.find(name);
    if (!plugin) {
      std::string why;
      for (const PluginRefusal& r : host.refusals()) {
        if (r.name == name) why += " It was refused: " + r.reason + " (" + r.path + ").";
      }
      std::string loaded;
      for (const auto& p : host.plugins()) loaded += (loaded.empty() ? "" : ", ") + p->name();
      throw Error("target '" + spec + "': no plugin named '" + name + "' is loaded." + why +
                  " Loaded: " + (loaded.empty() ? "none" : loaded) +
                  " (see `tessera info` for the directories searched)");
    }
    // A target the user named that cannot run is an error unless they allowed falling back:
    // skipping it quietly would leave its work to the next target, often the naive kernels.
    // Targets chosen automatically (none named) are skipped with a warning.
    const auto skip = [&](const std::string& why) {
      if (named && !options.allow_fallback) {
        throw Error("target '" + spec + "' cannot run: " + why +
                    ". Name only targets this machine has, or allow falling back to the next "
                    "target (partition.allow_fallback: true, --allow-fallback)");
      }
      plan.warnings.push_back("target '" + spec + "' skipped: " + why);
    };
    // Each target gets an instance of its own, made with its options: a refused option is the
    // user's error (never a fallback), and two targets of one plugin share no state.
    const auto settings = options.target_settings.find(spec);
    std::shared_ptr<PluginInstance> instance;
    try {
      instance = plugin->create_instance(
          settings == options.target_settings.end() ? TargetOptions{} : settings->second.options);
    } catch (const Error& e) {
      const std::string origin =
          settings == options.target_settings.end() ? "" : settings->second.origin;
      throw Error((origin.empty() ? "" : origin + ": ") + "target '" + spec + "': " + e.what());
    }
    std::vector<PluginDeviceInfo> devices;
    try {
      devices = instance->probe(selector);
    } catch (const Error& e) {
      skip(e.what());
      continue;
    }
    int best = -1;
    std::string unusable;
    for (size_t i = 0; i < devices.size(); ++i) {
      if (devices[i].score > 0 &&
          (best < 0 || devices[i].score > devices[static_cast<size_t>(best)].score)) {
        best = static_cast<int>(i);
      } else if (devices[i].score <= 0) {
        unusable += (unusable.empty() ? "" : "; ") + devices[i].name + ": " +
                    (devices[i].unusable_reason.empty() ? "score 0" : devices[i].unusable_reason);
      }
    }
    if (best < 0) {
      skip("no usable device" + (selector.empty() ? "" : " for selector '" + selector + "'") +
           (unusable.empty() ? "" : " (" + unusable + ")"));
      continue;
    }
    Target t;
    t.plugin = instance;
    t.spec = spec;
    t.info = devices[static_cast<size_t>(best)];
    t.device = t.info.id;
    t.domain = instance->buffer_domain(t.device);
    plan.targets.push_back(spec + " -> " + t.info.name + " (" + t.info.kind + ", id " + t.info.id +
                           ", score " + std::to_string(t.info.score) + ")");
    targets.push_back(std::move(t));
  }
  if (targets.empty()) {
    std::string why;
    for (const std::string& w : plan.warnings) why += "; " + w;
    throw Error("no usable target" +
                (specs.empty() ? std::string(": no plugin with a usable device is loaded") : why));
  }
  return targets;
}

// When a faster target was available but most of the estimated time still lands on the
// reference plugin (naive single-thread loops, 10-100x slower), says so in one warning: a user
// who asked for a GPU and got minutes on the reference kernels should not have to read the
// placement table to find out.
void warn_of_reference_share(const std::vector<Target>& targets, ExecutionPlan& plan) {
  const bool other_target = std::any_of(targets.begin(), targets.end(), [](const Target& t) {
    return t.plugin->name() != "reference";
  });
  double total = 0.0, on_reference = 0.0;
  int nodes = 0;
  const NodePlacement* first = nullptr;
  for (const NodePlacement& n : plan.nodes) {
    total += n.estimate_us;
    if (n.plugin != "reference") continue;
    on_reference += n.estimate_us;
    ++nodes;
    if (first == nullptr) first = &n;
  }
  if (!other_target || first == nullptr || on_reference < kReferenceWarningMinUs ||
      on_reference <= kReferenceShareWarning * total) {
    return;
  }
  char text[160];
  std::snprintf(text, sizeof(text),
                "%.0f%% of the estimated time (%.1f of %.1f ms, %d of %zu nodes) runs on the "
                "naive reference kernels",
                100.0 * on_reference / total, on_reference / 1e3, total / 1e3, nodes,
                plan.nodes.size());
  plan.warnings.push_back(std::string(text) + "; the first, '" + first->node + "' (" +
                          first->op_type + "): " + first->reason);
}

// Whether a target's regions copy their host-resident boundary values between core's host
// buffers and memory of their own (values in the target's buffer domain never do: see
// plan_buffers). This reads what a device info reports: a device of kind "gpu" or "npu" has its
// own memory, and a plugin that lists the "opencl" feature works on OpenCL buffers it fills from
// the host buffers even when its OpenCL device is the CPU (PoCL). The partitioner's
// Target::host_memory() prices transfers by the kind alone.
bool copies_to_device(const Target& target) {
  if (!target.host_memory()) return true;
  std::istringstream features(target.info.features);
  std::string feature;
  while (features >> feature) {
    if (feature == "opencl") return true;
  }
  return false;
}

// RunStats::max_regions_in_flight and overlap_us of the `regions`' [start, end) intervals, by a
// sweep over their starts and ends.
void measure_overlap(const std::vector<RegionProfile>& regions, RunStats& stats) {
  std::vector<std::pair<double, int>> events;  // time, +1 start / -1 end (ends sort first)
  for (const RegionProfile& r : regions) {
    events.emplace_back(r.start_us, 1);
    events.emplace_back(r.start_us + r.time_us, -1);
  }
  std::sort(events.begin(), events.end());
  int in_flight = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (in_flight >= 2) stats.overlap_us += events[i].first - events[i - 1].first;
    in_flight += events[i].second;
    stats.max_regions_in_flight = std::max(stats.max_regions_in_flight, in_flight);
  }
}

}  // namespace

// Boundary buffer sets of one plan, one per run() in flight: a run takes a set and gives it back
// when it ends, so concurrent runs never share activations and a steady stream of runs allocates
// no buffers. The plan keeps as many sets as it has had runs in flight at once, and none once it is
// no longer the session's current plan (cached plans keep their compiled regions, not memory).
class BufferPool {
 public:
  // A buffer in a device's memory domain, freed through the instance that allocated it (which it
  // keeps alive until then).
  struct DeviceBuffer {
    std::shared_ptr<PluginInstance> instance;
    tsr_buffer buffer = nullptr;
    DeviceBuffer(std::shared_ptr<PluginInstance> owner, const std::string& device, size_t bytes)
        : instance(std::move(owner)), buffer(instance->alloc_buffer(device, bytes)) {}
    ~DeviceBuffer() { instance->free_buffer(buffer); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  };
  // Per plan buffer: host memory, or (for a device-domain buffer) a device buffer.
  struct Slot {
    std::vector<std::byte> host;
    std::unique_ptr<DeviceBuffer> device;
  };
  using Set = std::vector<Slot>;
  // Makes the buffers of one set: host memory, or a device buffer from `allocate(b)`.
  using Allocate = std::function<std::unique_ptr<DeviceBuffer>(size_t buffer)>;

  std::unique_ptr<Set> take(const std::vector<size_t>& sizes, const std::vector<char>& on_device,
                            const Allocate& allocate) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        std::unique_ptr<Set> set = std::move(free_.back());
        free_.pop_back();
        return set;
      }
    }
    auto set = std::make_unique<Set>(sizes.size());
    for (size_t b = 0; b < sizes.size(); ++b) {
      if (on_device[b]) {
        (*set)[b].device = allocate(b);
      } else {
        (*set)[b].host.resize(sizes[b]);
      }
    }
    return set;
  }
  void give_back(std::unique_ptr<Set> set) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (keep_) free_.push_back(std::move(set));
  }
  // The plan became the session's current one: keep the sets given back.
  void retain() {
    std::lock_guard<std::mutex> lock(mutex_);
    keep_ = true;
  }
  // The plan is no longer current: free the sets not in use, and those given back until retain().
  void release() {
    std::lock_guard<std::mutex> lock(mutex_);
    keep_ = false;
    free_.clear();
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<Set>> free_;
  bool keep_ = true;
};

// One preparation of the graph for one input signature: partitioned, compiled, buffers planned.
struct Planned {
  struct Step {
    std::shared_ptr<PluginRegion> region;
    std::vector<ValueId> inputs, outputs;
    int target = -1;                // index into Session::Impl::targets
    std::vector<int> after;         // steps that finish before this one starts
    std::vector<int> next;          // steps that list this one in `after`
    bool copies_to_device = false;  // see copies_to_device()
    // Runs of one plan share its regions, and a plugin never executes one region twice at once.
    std::unique_ptr<std::mutex> mutex = std::make_unique<std::mutex>();
  };
  Graph graph;
  ExecutionPlan plan;
  std::vector<Step> steps;
  // ordered[a][b]: step b finishes before step a starts (b < a, through `after` edges).
  std::vector<std::vector<char>> ordered;
  bool concurrent = false;           // some two steps may run at once
  int64_t host_device_bytes = 0;     // RunStats::host_device_bytes of every run of this plan
  std::vector<int> value_buffer;     // per value: buffer index, -1 if none
  std::vector<size_t> buffer_sizes;  // boundary buffers, reused by liveness
  // Per buffer: 1 when it lives in a device's memory domain, and then the target whose instance
  // allocates it (any target of the domain could).
  std::vector<char> buffer_on_device;
  std::vector<int> buffer_target;
  std::vector<char> step_uses_buffers;  // per step: some input or output is device-resident
  BufferPool buffers;
};

// A graph whose shapes follow from a value computed at run time runs as two sessions: `first`
// computes that value (and what the rest reads of its part of the graph), then `rest`, made at
// the first run from the first stage's results, is prepared per run with the value bound.
struct Staged {
  detail::StageSplit split;
  std::unique_ptr<Session> first;  // null when the value is a graph input
  std::mutex mutex;                // guards `rest` while it is made
  std::unique_ptr<Session> rest;
  // The rest's inputs and outputs by name, as made (its plans bind value inputs away).
  std::vector<std::string> rest_inputs, rest_outputs;
  bool made = false;
  // A rest whose shapes follow from yet more values it computes itself (a detector's per-class
  // NonZero, TopK and NonMaxSuppression) is post-processing: it runs on the host's reference
  // kernels, evaluated by folding, rather than being split and planned again per value.
  bool eager = false;
  Graph rest_graph;
};

struct Session::Impl {
  Graph given;  // as the caller passed it; prepared again per signature when it can be
  std::shared_ptr<const PluginHost> host;
  SessionOptions options;
  // Resolved once: targets, their packs, and the plan parts every preparation shares.
  std::vector<Target> targets;
  std::vector<detail::DevicePacks> device_packs;
  ExecutionPlan base_plan;
  std::vector<ValueId> value_inputs;  // graph inputs whose values decide shapes
  bool replans = false;               // other shapes or values may be prepared and planned
  int plans_made = 0;
  // Plans by input signature, most recently used first; `current` is the plan of the latest run
  // to start, the one whose buffer sets are kept.
  std::list<std::pair<std::string, std::shared_ptr<Planned>>> plans;
  std::shared_ptr<Planned> current;
  ExecutionPlan waiting_plan;  // plan() before the first run of a graph that needs input values
  std::shared_ptr<Staged> staged;  // set once the graph runs in stages
  ExecutionPlan staged_plan;       // both stages' plans of the latest staged run
  std::vector<RegionProfile> last_profile;
  RunStats last_stats;
  mutable std::mutex mutex;  // everything above after construction
  // A session made from a package: per graph node, where it runs (index into `targets`), whether
  // in the reduced precision, and its config; planning then places nodes as these say.
  struct Fixed {
    std::string file;
    std::vector<int> target;         // per graph node, index into `targets`
    std::vector<PackageNode> nodes;  // per graph node, as the package has it
  };
  std::optional<Fixed> fixed;

  void resolve();        // targets, then resolve_packs()
  void resolve_packs();  // each target's pack and family (its throughput)
  // Each node where the package put it; a node its target no longer supports, or whose compile
  // failed there (`excluded`), is an error naming it.
  partition::Assignment fixed_assignment(
      const Graph& graph, const std::vector<std::vector<partition::NodeAnswer>>& answers,
      const std::vector<partition::Exclusion>& excluded) const;
  // Fixes the plan to the package's placement when its targets are the ones here (true), else
  // throws the reason or, with replan_package, warns and leaves planning free (false).
  bool adopt_package(const Package& package);
  void first_plan();  // the plan for the given graph, or the wait for input values
  // build(): per node whether it runs reduced (reduced_nodes), the regions compiled with
  // fallback (compile_regions, each region's settings from region_settings), then the steps
  // and the placement the plan reports (place), their order and buffers.
  using NodeAnswers = std::vector<std::vector<partition::NodeAnswer>>;
  struct Compiled {
    partition::Assignment assignment;
    std::vector<std::vector<int>> regions;
    std::map<std::pair<int, std::vector<int>>, std::shared_ptr<PluginRegion>> compiled;
    // Per (target, graph node): the config outcome of the node's latest compile on that target.
    std::map<std::pair<int, int>, detail::NodeConfigOutcome> config_outcomes;
  };
  std::shared_ptr<Planned> build(Graph graph) const;
  std::vector<bool> reduced_nodes(const Graph& graph, ExecutionPlan& plan) const;
  RegionCompileSettings region_settings(const Graph& graph, int t, const std::vector<int>& nodes,
                                        const std::vector<bool>& reduced, Compiled& c) const;
  Compiled compile_regions(const Graph& graph, const NodeAnswers& answers,
                           const std::vector<bool>& reduced, ExecutionPlan& plan) const;
  void place(Planned& result, const NodeAnswers& answers, const std::vector<bool>& reduced,
             const Compiled& c) const;
  void order_steps(Planned& p) const;
  void plan_buffers(Planned& p) const;
  void check_plan_memory(const Planned& p) const;
  std::string signature(const std::map<std::string, Tensor>* inputs) const;
  std::shared_ptr<Planned> planned_for(const std::map<std::string, Tensor>& inputs);
  void make_current(const std::shared_ptr<Planned>& p);
  void stage(const ValueNeededAtRun& needed);
  std::vector<Tensor> run_staged(Staged& staged, const std::map<std::string, Tensor>& inputs);
};

DevicePackPlan preview_device_pack(const std::string& plugin, const PluginDeviceInfo& device,
                                   const SessionOptions& options) {
  const detail::PackSources sources = detail::pack_sources_for(options);
  detail::DevicePacks packs = detail::select_device_packs(sources, plugin, plugin, device);
  for (const std::string& w : sources.warnings) packs.plan.warnings.push_back(w);
  return packs.plan;
}

void Session::Impl::resolve() {
  targets = resolve_targets(*host, options, base_plan);
  resolve_packs();
}

void Session::Impl::resolve_packs() {
  // Packs first: a bad --pack file fails before any compile work.
  const detail::PackSources pack_sources = detail::pack_sources_for(options);
  for (const std::string& w : pack_sources.warnings) base_plan.warnings.push_back(w);
  for (Target& t : targets) {
    device_packs.push_back(
        detail::select_device_packs(pack_sources, t.spec, t.plugin->name(), t.info));
    base_plan.packs.push_back(device_packs.back().plan);
    // The family's throughput prices this target's nodes; a CPU uses as many cores as it has
    // threads.
    for (const DeviceFamily& f : pack_sources.families) {
      if (f.id != device_packs.back().plan.family) continue;
      int64_t units = std::max<int64_t>(t.info.compute_units, 1);
      int32_t threads = options.threads;
      const auto per_target = options.target_settings.find(t.spec);
      if (per_target != options.target_settings.end() && per_target->second.threads > 0) {
        threads = per_target->second.threads;
      }
      if (t.host_memory() && threads > 0) units = std::min<int64_t>(units, threads);
      t.throughput = partition::device_throughput(f, units);
    }
  }
  for (const Pack& p : pack_sources.file_packs) {
    const bool used = std::any_of(targets.begin(), targets.end(),
                                  [&](const Target& t) { return t.plugin->name() == p.plugin; });
    if (!used) {
      base_plan.warnings.push_back("--pack " + p.file + " is for plugin '" + p.plugin +
                                   "', which is not among the targets; ignored");
    }
  }
  for (const detail::DevicePacks& d : device_packs) {
    for (const std::string& w : d.plan.warnings) base_plan.warnings.push_back("packs: " + w);
  }
}

std::vector<bool> Session::Impl::reduced_nodes(const Graph& graph, ExecutionPlan& plan) const {
  std::vector<bool> reduced(graph.nodes.size(), options.precision != "fp32");
  if (fixed) {
    for (size_t n = 0; n < reduced.size(); ++n) reduced[n] = fixed->nodes[n].precision != "fp32";
    return reduced;
  }
  if (!options.mixed_precision.enabled) return reduced;
  reduced = assign_reduced_precision(graph, options.mixed_precision);
  std::set<std::string> unlisted;
  for (const Node& n : graph.nodes) {
    bool listed = true;
    mixed_precision_class(n.op_type, options.mixed_precision, &listed);
    if (!listed) unlisted.insert(n.op_type);
  }
  for (const std::string& op : unlisted) {
    plan.warnings.push_back("mixed precision: op type " + op +
                            " is on no list (always, follow, never), so it stays fp32; a "
                            "deployment's mixed_precision lists can place it");
  }
  return reduced;
}

RegionCompileSettings Session::Impl::region_settings(const Graph& graph, int t,
                                                     const std::vector<int>& nodes,
                                                     const std::vector<bool>& reduced,
                                                     Compiled& c) const {
  const Target& target = targets[static_cast<size_t>(t)];
  RegionCompileSettings s;
  s.num_threads = options.threads;
  s.precision = reduced[static_cast<size_t>(nodes[0])] ? options.precision : "fp32";
  s.cache_dir = options.cache_dir;
  s.dump_dir = options.dump_kernels_dir;
  s.profile = options.profile_nodes;
  const auto per_target = options.target_settings.find(target.spec);
  if (per_target != options.target_settings.end() && per_target->second.threads > 0) {
    s.num_threads = per_target->second.threads;
  }
  const detail::DevicePacks& packs = device_packs[static_cast<size_t>(t)];
  if (packs.pack) s.pack_path = packs.pack->file;
  if (fixed) {
    // The package's configs; a node without one takes the plugin's heuristic, as it did when
    // the package was made.
    s.choose_config = [this, &c, t](const NodeConfigRequest& request) {
      const PackageNode& placed = fixed->nodes[static_cast<size_t>(request.graph_node)];
      detail::NodeConfigOutcome outcome;
      if (!placed.config.schedule.empty()) outcome.choice = placed.config;
      outcome.text = "package " + fixed->file + ": " + placed.config_source;
      c.config_outcomes[{t, request.graph_node}] = outcome;
      return outcome.choice;
    };
  } else if (packs.pack) {
    s.choose_config = [this, &c, &graph, t](const NodeConfigRequest& request) {
      detail::NodeConfigOutcome outcome =
          detail::choose_node_config(device_packs[static_cast<size_t>(t)], request,
                                     graph.nodes[static_cast<size_t>(request.graph_node)].name);
      std::optional<NodeConfigChoice> choice = outcome.choice;
      c.config_outcomes[{t, request.graph_node}] = std::move(outcome);
      return choice;
    };
  } else {
    // Nothing to apply: skip describe_node calls, but still say why per node.
    for (int n : nodes) {
      NodeConfigRequest request;
      request.graph_node = n;
      c.config_outcomes[{t, n}] = detail::choose_node_config(packs, request, "");
    }
  }
  return s;
}

Session::Impl::Compiled Session::Impl::compile_regions(const Graph& graph,
                                                       const NodeAnswers& answers,
                                                       const std::vector<bool>& reduced,
                                                       ExecutionPlan& plan) const {
  Compiled c;
  // Regions form over (target, precision) pairs, so a region never mixes the two.
  const auto region_key = [&](const std::vector<int>& target) {
    std::vector<int> key(target.size());
    for (size_t n = 0; n < target.size(); ++n) key[n] = target[n] * 2 + (reduced[n] ? 1 : 0);
    return key;
  };
  std::vector<partition::Exclusion> excluded;
  // Each failed compile rules out (node, target) pairs, so this ends.
  for (;;) {
    c.assignment = fixed ? fixed_assignment(graph, answers, excluded)
                         : partition::assign_nodes(graph, targets, answers, excluded,
                                                   options.min_island_nodes);
    c.regions = partition::form_regions(graph, region_key(c.assignment.target));
    bool failed = false;
    for (const std::vector<int>& nodes : c.regions) {
      const int t = c.assignment.target[static_cast<size_t>(nodes[0])];
      auto key = std::make_pair(t, nodes);
      if (c.compiled.count(key)) continue;
      const Target& target = targets[static_cast<size_t>(t)];
      try {
        c.compiled[key] = PluginRegion::compile(target.plugin, target.device, graph, nodes,
                                                region_settings(graph, t, nodes, reduced, c));
      } catch (const Error& e) {
        // The first few node names locate the region; a whole network's list made one warning
        // kilobytes long.
        std::string names;
        const size_t shown = std::min<size_t>(nodes.size(), 3);
        for (size_t i = 0; i < shown; ++i)
          names += (i ? ", " : "") + graph.nodes[static_cast<size_t>(nodes[i])].name;
        if (shown < nodes.size()) names += ", ...";
        const std::string region = "region of " + std::to_string(nodes.size()) + " node(s) [" +
                                   names + "] failed to compile on " + target.spec + ": " +
                                   e.what();
        if (!options.targets.empty() && !options.allow_fallback) {
          throw Error(region +
                      " (partition.allow_fallback is false, so no other target is "
                      "tried; --allow-fallback or partition.allow_fallback: true "
                      "moves it to the next target)");
        }
        plan.warnings.push_back(region + "; falling back to the next target");
        for (int n : nodes) excluded.push_back({n, t, "compile failed: " + std::string(e.what())});
        failed = true;
      }
    }
    if (!failed) return c;
  }
}

void Session::Impl::place(Planned& result, const NodeAnswers& answers,
                          const std::vector<bool>& reduced, const Compiled& c) const {
  const Graph& graph = result.graph;
  ExecutionPlan& plan = result.plan;
  const auto precision_of = [&](int node) {
    return reduced[static_cast<size_t>(node)] ? options.precision : std::string("fp32");
  };
  std::vector<int> region_of(graph.nodes.size(), -1);
  for (size_t r = 0; r < c.regions.size(); ++r) {
    const int t = c.assignment.target[static_cast<size_t>(c.regions[r][0])];
    const Target& target = targets[static_cast<size_t>(t)];
    Planned::Step step;
    step.region = c.compiled.at({t, c.regions[r]});
    step.target = t;
    step.copies_to_device = copies_to_device(target);
    step.inputs = step.region->input_values();
    step.outputs = step.region->output_values();
    RegionPlacement rp;
    rp.id = static_cast<int>(r);
    rp.plugin = target.plugin->name();
    rp.device = target.info.name;
    rp.precision = precision_of(c.regions[r][0]);
    for (int n : c.regions[r]) {
      region_of[static_cast<size_t>(n)] = static_cast<int>(r);
      rp.nodes.push_back(graph.nodes[static_cast<size_t>(n)].name);
      rp.estimated_us += answers[static_cast<size_t>(n)][static_cast<size_t>(t)].cost_us;
    }
    for (ValueId v : step.inputs) rp.inputs.push_back(graph.value(v).name);
    for (ValueId v : step.outputs) rp.outputs.push_back(graph.value(v).name);
    plan.regions.push_back(std::move(rp));
    result.steps.push_back(std::move(step));
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const int t = c.assignment.target[n];
    const Target& target = targets[static_cast<size_t>(t)];
    NodePlacement placement;
    placement.node = graph.nodes[n].name;
    placement.op_type = graph.nodes[n].op_type;
    placement.plugin = target.plugin->name();
    placement.device = target.info.name;
    placement.region = region_of[n];
    placement.precision = precision_of(static_cast<int>(n));
    placement.reason = c.assignment.reason[n];
    const partition::NodeAnswer& answer = answers[n][static_cast<size_t>(t)];
    placement.estimate = answer.estimate;
    placement.estimate_us = answer.cost_us;
    auto it = c.config_outcomes.find({t, static_cast<int>(n)});
    placement.target = target.spec;
    if (it != c.config_outcomes.end()) {
      placement.config = it->second.text;
      if (it->second.choice) placement.config_choice = *it->second.choice;
      if (!it->second.warning.empty()) plan.warnings.push_back(it->second.warning);
    }
    plan.nodes.push_back(std::move(placement));
  }
}

std::shared_ptr<Planned> Session::Impl::build(Graph prepared) const {
  auto result = std::make_shared<Planned>();
  result->graph = std::move(prepared);
  result->plan = base_plan;
  const NodeAnswers answers = partition::query_nodes(result->graph, targets);
  // The mixed-precision pass: per node, reduced (the session's precision) or fp32.
  const std::vector<bool> reduced = reduced_nodes(result->graph, result->plan);
  const Compiled compiled = compile_regions(result->graph, answers, reduced, result->plan);
  place(*result, answers, reduced, compiled);
  warn_of_reference_share(targets, result->plan);
  order_steps(*result);
  plan_buffers(*result);
  return result;
}

// The steps' dependency graph: a step waits for the steps producing its inputs, and for the
// previous step on its target, since a plugin device runs one region at a time (its queue or
// thread pool is sized for one) and so gains nothing from a second. Steps are in an order that
// respects these edges, so every `after` step has a smaller index.
void Session::Impl::order_steps(Planned& p) const {
  std::vector<Planned::Step>& steps = p.steps;
  const size_t n = steps.size();
  std::vector<int> producer(p.graph.values.size(), -1);
  std::vector<int> last_on_target(targets.size(), -1);
  p.ordered.assign(n, std::vector<char>(n, 0));
  for (size_t s = 0; s < n; ++s) {
    Planned::Step& step = steps[s];
    std::vector<int>& after = step.after;
    for (ValueId v : step.inputs) {
      if (producer[static_cast<size_t>(v)] >= 0) after.push_back(producer[static_cast<size_t>(v)]);
    }
    int& previous = last_on_target[static_cast<size_t>(step.target)];
    if (previous >= 0) after.push_back(previous);
    previous = static_cast<int>(s);
    std::sort(after.begin(), after.end());
    after.erase(std::unique(after.begin(), after.end()), after.end());
    std::vector<char>& before = p.ordered[s];
    for (int a : after) {
      steps[static_cast<size_t>(a)].next.push_back(static_cast<int>(s));
      before[static_cast<size_t>(a)] = 1;
      for (size_t b = 0; b < s; ++b) before[b] |= p.ordered[static_cast<size_t>(a)][b];
    }
    // A step that is not after every earlier one may run beside one of them.
    if (std::count(before.begin(), before.begin() + static_cast<std::ptrdiff_t>(s), 1) !=
        static_cast<std::ptrdiff_t>(s)) {
      p.concurrent = true;
    }
    for (ValueId v : step.outputs) producer[static_cast<size_t>(v)] = static_cast<int>(s);
  }
}

// Values produced by a region get a buffer: in the memory domain of the producer's device when
// every region reading the value runs on a device of that domain (ABI 2.1 buffer kinds: the value
// never crosses the host), else in host memory. A buffer is reused for a step's output only
// when it is of the same domain and the step is ordered after the producer and every reader of
// the buffer's previous value (Planned::ordered), so steps that may run at once never share a
// buffer; between steps that run one after another this is reuse by liveness. This costs memory
// only where steps may overlap, where the alternative, edges from those readers to the new
// writer, would serialize independent branches for the sake of a buffer. Graph outputs are never
// reused (they are copied out at the end) and always live in host memory.
void Session::Impl::plan_buffers(Planned& p) const {
  const Graph& graph = p.graph;
  const std::vector<Planned::Step>& steps = p.steps;
  std::vector<int>& value_buffer = p.value_buffer;
  ExecutionPlan& plan = p.plan;
  value_buffer.assign(graph.values.size(), -1);
  std::vector<size_t> sizes;
  std::vector<std::string> domains;  // per buffer, "" = host
  // Per buffer: the steps using the value it holds last (its producer and readers), and whether
  // that value is a graph output (never reused).
  std::vector<std::vector<int>> users;
  std::vector<char> pinned;
  p.buffer_target.clear();
  p.step_uses_buffers.assign(steps.size(), 0);
  std::vector<char> on_device(graph.values.size(), 0);
  const auto is_free = [&](size_t b, size_t s, const std::string& domain) {
    if (pinned[b] || domains[b] != domain) return false;
    const std::vector<char>& before = p.ordered[s];
    return std::all_of(users[b].begin(), users[b].end(), [&](int u) {
      return static_cast<size_t>(u) < s && before[static_cast<size_t>(u)];
    });
  };
  for (size_t s = 0; s < steps.size(); ++s) {
    for (ValueId v : steps[s].outputs) {
      const Value& value = graph.value(v);
      // Shape inference already refused values over the limit; this stays checked because a
      // wrapped size here would be a buffer smaller than what the kernel writes.
      const size_t bytes =
          static_cast<size_t>(std::max<int64_t>(1, shape_nbytes(value.shape, value.dtype)));
      // Readers come from a scan of the later steps (few), not a table sized by the graph's
      // values: with that table, made at every plan, the soak benchmark's resident memory grew
      // faster over rebuilt sessions although nothing leaked.
      std::vector<int> readers;
      for (size_t r = s + 1; r < steps.size(); ++r) {
        const std::vector<ValueId>& in = steps[r].inputs;
        if (std::find(in.begin(), in.end(), v) != in.end()) readers.push_back(static_cast<int>(r));
      }
      const bool output =
          std::find(graph.outputs.begin(), graph.outputs.end(), v) != graph.outputs.end();
      std::string domain = targets[static_cast<size_t>(steps[s].target)].domain;
      const auto same_domain = [&](int r) {
        return targets[static_cast<size_t>(steps[static_cast<size_t>(r)].target)].domain == domain;
      };
      if (output || readers.empty() || !std::all_of(readers.begin(), readers.end(), same_domain)) {
        domain.clear();
      }
      int best = -1;
      for (size_t b = 0; b < sizes.size(); ++b) {
        if (!is_free(b, s, domain)) continue;
        // Prefer the smallest free buffer that fits, else the largest free one (it grows).
        if (best < 0) {
          best = static_cast<int>(b);
          continue;
        }
        const size_t cur = sizes[static_cast<size_t>(best)];
        const bool fits = sizes[b] >= bytes, cur_fits = cur >= bytes;
        if ((fits && (!cur_fits || sizes[b] < cur)) || (!fits && !cur_fits && sizes[b] > cur)) {
          best = static_cast<int>(b);
        }
      }
      if (best < 0) {
        best = static_cast<int>(sizes.size());
        sizes.push_back(0);
        users.emplace_back();
        pinned.push_back(0);
        domains.push_back(domain);
        p.buffer_target.push_back(steps[s].target);
      }
      const size_t chosen = static_cast<size_t>(best);
      sizes[chosen] = std::max(sizes[chosen], bytes);
      users[chosen] = {static_cast<int>(s)};
      users[chosen].insert(users[chosen].end(), readers.begin(), readers.end());
      pinned[chosen] = output;
      value_buffer[static_cast<size_t>(v)] = best;
      ++plan.boundary_values;
      if (!domain.empty()) {
        ++plan.device_values;
        on_device[static_cast<size_t>(v)] = 1;
        p.step_uses_buffers[s] = 1;
        for (int r : readers) p.step_uses_buffers[static_cast<size_t>(r)] = 1;
      }
    }
  }
  p.buffer_sizes = std::move(sizes);
  p.buffer_on_device.assign(domains.size(), 0);
  for (size_t b = 0; b < domains.size(); ++b) p.buffer_on_device[b] = !domains[b].empty();
  check_plan_memory(p);
  plan.buffers = static_cast<int>(p.buffer_sizes.size());
  plan.buffer_bytes = 0;
  for (size_t b = 0; b < p.buffer_sizes.size(); ++b) {
    plan.buffer_bytes += p.buffer_sizes[b];
    if (p.buffer_on_device[b]) {
      ++plan.device_buffers;
      plan.device_buffer_bytes += p.buffer_sizes[b];
    }
  }
  // Bytes a run moves between host memory and a device's own memory: every host-resident input
  // and output of the regions of targets that copy (see copies_to_device()).
  p.host_device_bytes = 0;
  for (const Planned::Step& step : steps) {
    if (!step.copies_to_device) continue;
    for (const std::vector<ValueId>* values : {&step.inputs, &step.outputs}) {
      for (ValueId v : *values) {
        if (on_device[static_cast<size_t>(v)]) continue;
        const Value& value = graph.value(v);
        p.host_device_bytes += shape_nbytes(value.shape, value.dtype);
      }
    }
  }
}

// Refuses a plan whose constants, boundary buffers and outputs together exceed the memory limit,
// before the buffers are allocated, naming the largest value so the user knows what to shrink.
void Session::Impl::check_plan_memory(const Planned& p) const {
  const Graph& graph = p.graph;
  const std::vector<size_t>& buffer_sizes = p.buffer_sizes;
  const char* what = "session memory plan";
  int64_t total = 0;
  int64_t largest = -1;
  const Value* largest_value = nullptr;
  auto count = [&](const Value& v) {
    const int64_t bytes = shape_nbytes(v.shape, v.dtype);
    total = checked_add(total, bytes, what);
    if (bytes > largest) {
      largest = bytes;
      largest_value = &v;
    }
  };
  for (const Value& v : graph.values) {
    if (v.constant) count(v);
  }
  for (ValueId id : graph.outputs) count(graph.value(id));
  for (size_t bytes : buffer_sizes) total = checked_add(total, static_cast<int64_t>(bytes), what);
  if (total > memory_limit()) {
    std::string detail;
    if (largest_value != nullptr) {
      detail = " (largest value '" + largest_value->name +
               "': " + dtype_name(largest_value->dtype) + " " + shape_str(largest_value->shape) +
               ", " + bytes_str(largest) + ")";
    }
    check_memory_limit(total, (graph.source.empty() ? std::string("the model") : graph.source) +
                                  ": constants, buffers and outputs" + detail);
  }
}

namespace {

void check_session_options(const SessionOptions& options) {
  if (options.plan_cache_size < 1) {
    throw Error("Session: plan_cache_size must be at least 1, got " +
                std::to_string(options.plan_cache_size));
  }
  if (options.mixed_precision.enabled && options.precision == "fp32") {
    throw Error(
        "Session: mixed precision keeps some nodes in fp32 and runs the rest in the "
        "session's precision, which is fp32: it needs precision fp16 or fp16-acc32");
  }
}

std::shared_ptr<const PluginHost> make_plugin_host(const SessionOptions& options,
                                                   std::vector<std::string> only = {}) {
  PluginHostOptions host_options;
  host_options.dirs = options.plugin_dirs;
  host_options.use_environment = options.use_plugin_environment;
  host_options.use_default_dirs = options.use_default_plugin_dirs;
  host_options.allow_shadowing = options.allow_plugin_shadowing;
  host_options.only = std::move(only);
  return std::make_shared<const PluginHost>(host_options);
}

std::vector<std::string> package_plugins(const Package& package) {
  std::vector<std::string> names;
  for (const PackageTarget& t : package.targets) {
    if (std::find(names.begin(), names.end(), t.plugin) == names.end()) names.push_back(t.plugin);
  }
  return names;
}

// The options a package's session runs with: its targets, precision and target settings, unless
// the caller's options set them.
SessionOptions package_options(const Package& package, const SessionOptions& given) {
  SessionOptions o = given;
  std::vector<std::string> specs;
  for (const PackageTarget& t : package.targets) specs.push_back(t.spec);
  if (!given.targets.empty() && given.targets != specs) {
    std::string list;
    for (const std::string& s : specs) list += (list.empty() ? "" : ",") + s;
    throw Error(package.file + ": the package was compiled for the targets " + list +
                "; compile the model again for other targets");
  }
  o.targets = specs;
  if (given.precision == "fp32") o.precision = package.precision;
  if (o.precision != package.precision) {
    throw Error(package.file + ": the package was compiled for precision " + package.precision +
                ", not " + o.precision + "; compile the model again for it");
  }
  for (const PackageTarget& t : package.targets) {
    TargetSettings& settings = o.target_settings[t.spec];
    if (settings.threads == 0) settings.threads = t.threads;
    if (settings.options.empty()) settings.options = t.options;
    if (settings.origin.empty()) settings.origin = package.file + ": target " + t.spec;
  }
  // Configs come from the package, not from packs (a re-plan reads packs again, see
  // adopt_package).
  o.mixed_precision.enabled = false;
  return o;
}

}  // namespace

bool Session::Impl::adopt_package(const Package& package) {
  std::vector<std::string> reasons;
  if (package.engine_version != TESSERA_VERSION) {
    reasons.push_back("it was made by tessera " + package.engine_version + ", this is " +
                      TESSERA_VERSION);
  }
  std::map<int, int> target_of;  // package target -> resolved target
  for (size_t p = 0; p < package.targets.size(); ++p) {
    const PackageTarget& want = package.targets[p];
    for (size_t t = 0; t < targets.size(); ++t) {
      if (targets[t].spec == want.spec) target_of[static_cast<int>(p)] = static_cast<int>(t);
    }
    auto it = target_of.find(static_cast<int>(p));
    if (it == target_of.end()) {
      reasons.push_back("target " + want.spec + " has no usable device here");
      continue;
    }
    const Target& have = targets[static_cast<size_t>(it->second)];
    if (have.plugin->plugin().version() != want.plugin_version) {
      reasons.push_back("target " + want.spec + ": plugin " + want.plugin + " is version " +
                        have.plugin->plugin().version() + " here, " + want.plugin_version +
                        " in the package");
    }
    if (have.info.name != want.device || have.info.driver_version != want.driver) {
      reasons.push_back("target " + want.spec + " is device '" + have.info.name + "' (driver " +
                        have.info.driver_version + ") here, '" + want.device + "' (driver " +
                        want.driver + ") in the package");
    }
  }
  if (!reasons.empty()) {
    std::string why;
    for (const std::string& r : reasons) why += (why.empty() ? "" : "; ") + r;
    if (!options.replan_package) {
      throw Error(package.file + ": the package does not fit here: " + why +
                  " (--replan, or SessionOptions::replan_package, plans its graph again for the "
                  "devices here)");
    }
    base_plan.warnings.push_back("package " + package.file + " planned again: " + why);
    return false;
  }
  Fixed f;
  f.file = package.file;
  f.nodes = package.nodes;
  for (const PackageNode& n : package.nodes) f.target.push_back(target_of.at(n.target));
  fixed = std::move(f);
  return true;
}

partition::Assignment Session::Impl::fixed_assignment(
    const Graph& graph, const std::vector<std::vector<partition::NodeAnswer>>& answers,
    const std::vector<partition::Exclusion>& excluded) const {
  partition::Assignment a;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const int t = fixed->target[n];
    const std::string& node = graph.nodes[n].name;
    const std::string& spec = targets[static_cast<size_t>(t)].spec;
    for (const partition::Exclusion& e : excluded) {
      if (e.node == static_cast<int>(n) && e.target == t) {
        throw Error(fixed->file + ": node '" + node + "' cannot run on " + spec + ": " + e.reason);
      }
    }
    const partition::NodeAnswer& answer = answers[n][static_cast<size_t>(t)];
    if (!answer.supported) {
      throw Error(fixed->file + ": node '" + node + "' was compiled for " + spec +
                  ", which no longer runs it: " + answer.reason);
    }
    a.target.push_back(t);
    a.reason.push_back("package: " + spec);
  }
  return a;
}

void Session::Impl::first_plan() {
  if (!given.unsized_inputs.empty()) {
    // Open dims with no size: plan from the shapes of the first run, then per signature.
    waiting_plan = base_plan;
    std::string names;
    for (ValueId id : given.unsized_inputs) {
      names += (names.empty() ? "'" : ", '") + given.value(id).name + "' " +
               open_shape_str(given.value(id));
    }
    waiting_plan.warnings.push_back("input(s) " + names +
                                    " have open dimensions: the graph is planned at the first "
                                    "run for the shapes it brings, and again for other shapes");
    return;
  }
  if (!given.value_needed_at_run.empty()) {
    // Preparation met a value computed at run time (prepare_graph): stages, made at first run.
    waiting_plan = base_plan;
    waiting_plan.warnings.push_back(
        "shapes depend on values the model computes (NonZero, NonMaxSuppression, a TopK k or an "
        "If condition from data): it runs in stages, planned at the first run");
    return;
  }
  if (!value_inputs.empty()) {
    // Shapes depend on input values: each run's values are prepared and planned (then cached).
    waiting_plan = base_plan;
    std::string names;
    for (ValueId id : value_inputs) {
      names += (names.empty() ? "'" : ", '") + given.value(id).name + "'";
    }
    waiting_plan.warnings.push_back(
        "shapes depend on the values of input(s) " + names +
        ": the graph is prepared and planned at the first run, and again for other values");
    waiting_plan.value_inputs = names;
    return;
  }
  auto first = build(given);
  first->plan.plan_number = ++plans_made;
  first->plan.input_signature = signature(nullptr);
  plans.emplace_front(first->plan.input_signature, first);
  make_current(first);
}

Session::Session(Graph graph, const SessionOptions& options)
    : Session(std::move(graph), options, make_plugin_host(options)) {}

Session::Session(Graph graph, const SessionOptions& options, std::shared_ptr<const PluginHost> host)
    : impl_(std::make_unique<Impl>()) {
  if (!host) throw Error("Session: no plugin host given");
  check_session_options(options);
  Impl& impl = *impl_;
  impl.given = std::move(graph);
  impl.host = std::move(host);
  impl.options = options;
  impl.value_inputs = impl.given.value_inputs;
  impl.replans = impl.given.unprepared != nullptr || planned_at_first_run(impl.given);
  impl.resolve();
  impl.first_plan();
}

Session::Session(const Package& package, const SessionOptions& options)
    : Session(package, options, make_plugin_host(options, package_plugins(package))) {}

Session::Session(const Package& package, const SessionOptions& options,
                 std::shared_ptr<const PluginHost> host)
    : impl_(std::make_unique<Impl>()) {
  if (!host) throw Error("Session: no plugin host given");
  SessionOptions o = package_options(package, options);
  check_session_options(o);
  Impl& impl = *impl_;
  impl.given = package.graph;
  impl.host = std::move(host);
  impl.options = o;
  // The package's configs need no packs; a package planned again reads them as a model would.
  impl.options.pack_mode = PackMode::kNone;
  impl.targets = resolve_targets(*impl.host, impl.options, impl.base_plan);
  if (!impl.adopt_package(package)) impl.options.pack_mode = o.pack_mode;
  impl.resolve_packs();
  impl.first_plan();
}

Session::~Session() = default;

// "x: float32 [1, 3, 224, 224]; shape: int64 [2] = 1,-1" from the tensors given, or from the
// given graph's inputs (nullptr). Values are part of it only for value inputs.
std::string Session::Impl::signature(const std::map<std::string, Tensor>* inputs) const {
  std::string text;
  for (ValueId id : given.inputs) {
    const Value& v = given.value(id);
    const Tensor* t = nullptr;
    if (inputs != nullptr) {
      auto it = inputs->find(v.name);
      if (it != inputs->end()) t = &it->second;
    }
    text += (text.empty() ? "" : "; ") + v.name + ": " + dtype_name(t ? t->dtype() : v.dtype) +
            " " + shape_str(t ? t->shape() : v.shape);
    if (t != nullptr &&
        std::find(value_inputs.begin(), value_inputs.end(), id) != value_inputs.end()) {
      text += " = " + tensor_values_text(*t);
    }
  }
  return text;
}

void Session::Impl::make_current(const std::shared_ptr<Planned>& p) {
  if (current == p) return;
  if (current) current->buffers.release();
  current = p;
  current->buffers.retain();
}

std::shared_ptr<Planned> Session::Impl::planned_for(const std::map<std::string, Tensor>& inputs) {
  const std::string where = given.source.empty() ? "graph" : given.source;
  for (const auto& [name, tensor] : inputs) {
    const ValueId id = given.find_value(name);
    if (id == kNoValue ||
        std::find(given.inputs.begin(), given.inputs.end(), id) == given.inputs.end()) {
      throw Error(where + ": '" + name +
                  "' is not an input of the model (its inputs: " + given.input_names() + ")");
    }
  }
  for (ValueId id : given.inputs) {
    const Value& v = given.value(id);
    if (inputs.count(v.name) == 0)
      throw Error(where + ": no tensor given for input '" + v.name + "'");
  }
  const std::string key = signature(&inputs);
  for (auto it = plans.begin(); it != plans.end(); ++it) {
    if (it->first != key) continue;
    plans.splice(plans.begin(), plans, it);
    make_current(it->second);
    return current;
  }
  if (!replans) {
    // A graph prepared without its unprepared form (built in memory) runs only as planned.
    for (ValueId id : given.inputs) {
      const Value& v = given.value(id);
      const Tensor& t = inputs.at(v.name);
      if (t.dtype() != v.dtype || t.shape() != v.shape) {
        throw Error(where + ": input '" + v.name + "' expects " + dtype_name(v.dtype) + " " +
                    shape_str(v.shape) + ", got " + dtype_name(t.dtype()) + " " +
                    shape_str(t.shape()));
      }
    }
  }
  Graph prepared = prepare_for_inputs(given, inputs);
  for (ValueId id : prepared.value_inputs) {
    if (std::find(value_inputs.begin(), value_inputs.end(), id) == value_inputs.end()) {
      value_inputs.push_back(id);
    }
  }
  auto p = build(std::move(prepared));
  p->plan.plan_number = ++plans_made;
  p->plan.input_signature = signature(&inputs);  // with any value inputs found just now
  for (ValueId id : value_inputs) {
    p->plan.value_inputs +=
        (p->plan.value_inputs.empty() ? "'" : ", '") + given.value(id).name + "'";
  }
  plans.emplace_front(p->plan.input_signature, p);
  while (plans.size() > static_cast<size_t>(options.plan_cache_size)) plans.pop_back();
  make_current(p);
  return current;
}

namespace {

// Where every value of one run lives: constants, the caller's inputs, the returned tensors and
// the run's boundary buffers. All of it is decided before any step runs, so steps running at
// once only read it.
struct RunMemory {
  std::vector<const void*> location;              // per value (host memory; nullptr on device)
  std::vector<tsr_buffer> device;                 // per value: its device buffer, or nullptr
  std::vector<const void*> inputs;                // per step, its inputs' locations, concatenated
  std::vector<void*> outputs;                     // per step, its outputs' locations, concatenated
  std::vector<size_t> first_input, first_output;  // per step, index into inputs / outputs
  // The same as host memory or device buffer, for steps with a device-resident value
  // (Planned::step_uses_buffers), at the same indices.
  std::vector<tsr_io> io_inputs, io_outputs;
};

// The returned tensors are allocated first and the steps producing graph outputs write into them,
// so an output is never copied out of the boundary buffers (for a segmentation map, 4 MiB
// zero-filled and copied per run). An output listed twice, or one no step produces (an input or a
// constant), is copied by the caller afterwards.
RunMemory place_values(const Planned& planned, const std::map<std::string, Tensor>& inputs,
                       std::vector<Tensor>& outputs, BufferPool::Set& buffers) {
  const Graph& graph = planned.graph;
  RunMemory m;
  std::vector<const void*>& location = m.location;
  location.assign(graph.values.size(), nullptr);
  for (size_t i = 0; i < graph.values.size(); ++i) {
    if (graph.values[i].constant) location[i] = graph.values[i].constant->raw();
  }
  for (ValueId id : graph.inputs) {
    location[static_cast<size_t>(id)] = inputs.at(graph.value(id).name).raw();
  }
  std::vector<void*> output_memory(graph.values.size(), nullptr);
  for (ValueId id : graph.outputs) {
    const Value& v = graph.value(id);
    outputs.emplace_back(v.dtype, v.shape, Tensor::Uninitialized{});
    if (output_memory[static_cast<size_t>(id)] == nullptr &&
        location[static_cast<size_t>(id)] == nullptr) {
      output_memory[static_cast<size_t>(id)] = outputs.back().raw();
    }
  }
  m.device.assign(graph.values.size(), nullptr);
  for (const Planned::Step& step : planned.steps) {
    m.first_output.push_back(m.outputs.size());
    for (ValueId v : step.outputs) {
      void* p = output_memory[static_cast<size_t>(v)];
      if (p == nullptr) {
        BufferPool::Slot& slot =
            buffers[static_cast<size_t>(planned.value_buffer[static_cast<size_t>(v)])];
        if (slot.device) {
          m.device[static_cast<size_t>(v)] = slot.device->buffer;
        } else {
          p = slot.host.data();
        }
      }
      m.outputs.push_back(p);
      location[static_cast<size_t>(v)] = p;
      m.io_outputs.push_back({p, m.device[static_cast<size_t>(v)]});
    }
  }
  for (const Planned::Step& step : planned.steps) {
    m.first_input.push_back(m.inputs.size());
    for (ValueId v : step.inputs) {
      m.inputs.push_back(location[static_cast<size_t>(v)]);
      m.io_inputs.push_back(
          {const_cast<void*>(location[static_cast<size_t>(v)]), m.device[static_cast<size_t>(v)]});
    }
  }
  return m;
}

// Runs every step of `planned`, each as soon as the steps it is after have finished, calling
// `run_step(s)` for step s. A plan whose steps form one chain runs on the calling thread; others
// run as oneTBB tasks, which the calling thread helps with while it waits. Each step is isolated,
// so a thread waiting inside a plugin's own parallel loop never picks up another step (of this run
// or another run) that could wait on a region lock it holds. The first exception is rethrown once
// the steps it did not prevent have finished.
template <typename RunStep>
void run_steps(const Planned& planned, const RunStep& run_step) {
  const std::vector<Planned::Step>& steps = planned.steps;
  if (!planned.concurrent) {
    for (size_t s = 0; s < steps.size(); ++s) run_step(s);
    return;
  }
  std::unique_ptr<std::atomic<int>[]> waiting(new std::atomic<int>[steps.size()]);
  for (size_t s = 0; s < steps.size(); ++s) {
    waiting[s].store(static_cast<int>(steps[s].after.size()), std::memory_order_relaxed);
  }
  tbb::task_group group;
  std::function<void(size_t)> start = [&](size_t s) {
    group.run([&, s] {
      tbb::this_task_arena::isolate([&] { run_step(s); });
      for (int n : steps[s].next) {
        if (waiting[static_cast<size_t>(n)].fetch_sub(1, std::memory_order_acq_rel) == 1) {
          start(static_cast<size_t>(n));
        }
      }
    });
  };
  for (size_t s = 0; s < steps.size(); ++s) {
    if (steps[s].after.empty()) start(s);
  }
  group.wait();
}

}  // namespace

std::vector<Tensor> Session::run(const std::map<std::string, Tensor>& inputs) {
  std::shared_ptr<Planned> planned;
  std::shared_ptr<Staged> staged;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (!impl_->staged) {
      try {
        planned = impl_->planned_for(inputs);
      } catch (const ValueNeededAtRun& e) {
        impl_->stage(e);
      }
    }
    staged = impl_->staged;
  }
  if (staged) return impl_->run_staged(*staged, inputs);
  const Graph& graph = planned->graph;
  std::unique_ptr<BufferPool::Set> buffers =
      planned->buffers.take(planned->buffer_sizes, planned->buffer_on_device, [&](size_t b) {
        const Target& target = impl_->targets[static_cast<size_t>(planned->buffer_target[b])];
        return std::make_unique<BufferPool::DeviceBuffer>(target.plugin, target.device,
                                                          planned->buffer_sizes[b]);
      });
  std::vector<Tensor> outputs;
  const RunMemory memory = place_values(*planned, inputs, outputs, *buffers);
  std::vector<RegionProfile> profile(planned->steps.size());
  const auto run_start = std::chrono::steady_clock::now();
  const auto run_step = [&](size_t s) {
    Planned::Step& step = planned->steps[s];
    RegionProfile& rp = profile[s];
    rp.region = static_cast<int>(s);
    rp.plugin = step.region->plugin().name();
    std::lock_guard<std::mutex> region_lock(*step.mutex);
    const auto start = std::chrono::steady_clock::now();
    if (planned->step_uses_buffers[s]) {
      step.region->execute(memory.io_inputs.data() + memory.first_input[s],
                           memory.io_outputs.data() + memory.first_output[s]);
    } else {
      step.region->execute(memory.inputs.data() + memory.first_input[s],
                           memory.outputs.data() + memory.first_output[s]);
    }
    const auto end = std::chrono::steady_clock::now();
    rp.time_us = std::chrono::duration<double, std::micro>(end - start).count();
    rp.start_us = std::chrono::duration<double, std::micro>(start - run_start).count();
    rp.node_times_us = step.region->last_profile();
  };
  try {
    run_steps(*planned, run_step);
  } catch (...) {
    planned->buffers.give_back(std::move(buffers));
    throw;
  }
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    Tensor& t = outputs[i];
    const void* produced = memory.location[static_cast<size_t>(graph.outputs[i])];
    if (t.nbytes() > 0 && produced != t.raw()) std::memcpy(t.raw(), produced, t.nbytes());
  }
  planned->buffers.give_back(std::move(buffers));
  RunStats stats;
  stats.host_device_bytes = planned->host_device_bytes;
  measure_overlap(profile, stats);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->last_profile = std::move(profile);
  impl_->last_stats = stats;
  return outputs;
}

const ExecutionPlan& Session::plan() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->staged) return impl_->staged_plan;
  return impl_->current ? impl_->current->plan : impl_->waiting_plan;
}

std::vector<RegionProfile> Session::profile() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->last_profile;
}

RunStats Session::last_run_stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->last_stats;
}

const Graph& Session::graph() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->staged) return impl_->given;
  return impl_->current ? impl_->current->graph : impl_->given;
}
const PluginHost& Session::plugin_host() const {
  return *impl_->host;
}

int Session::plans_held() const {
  std::shared_ptr<Staged> staged;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (!impl_->staged) return static_cast<int>(impl_->plans.size());
    staged = impl_->staged;
  }
  std::lock_guard<std::mutex> lock(staged->mutex);
  return (staged->first ? staged->first->plans_held() : 0) +
         (staged->rest ? staged->rest->plans_held() : 0);
}

namespace {

// One plan describing both stages: the first's nodes and regions, then the second's with its
// region numbers following on.
ExecutionPlan merged_plan(const ExecutionPlan* first, const ExecutionPlan* rest,
                          const std::string& needed) {
  ExecutionPlan m = first ? *first : rest ? *rest : ExecutionPlan{};
  if (first && rest) {
    const int offset = static_cast<int>(m.regions.size());
    for (RegionPlacement r : rest->regions) {
      r.id += offset;
      m.regions.push_back(std::move(r));
    }
    for (NodePlacement n : rest->nodes) {
      if (n.region >= 0) n.region += offset;
      m.nodes.push_back(std::move(n));
    }
    m.warnings.insert(m.warnings.end(), rest->warnings.begin(), rest->warnings.end());
    m.boundary_values += rest->boundary_values;
    m.buffers += rest->buffers;
    m.buffer_bytes += rest->buffer_bytes;
    m.device_values += rest->device_values;
    m.device_buffers += rest->device_buffers;
    m.device_buffer_bytes += rest->device_buffer_bytes;
  }
  m.warnings.push_back("ran in two stages: the value '" + needed +
                       "' decides the shapes after it, so the nodes it depends on run first "
                       "and the rest is planned for each run's value");
  return m;
}

}  // namespace

namespace {

// Whether the second stage, prepared for this run's values, still meets a value it computes
// itself that decides shapes.
bool needs_more_stages(const Graph& rest, const std::vector<std::string>& names,
                       const std::map<std::string, Tensor>& results,
                       const std::map<std::string, Tensor>& inputs) {
  std::map<std::string, Tensor> feed;
  for (const std::string& name : names) {
    auto it = results.find(name);
    if (it != results.end()) {
      feed.emplace(name, it->second);
    } else if (auto in = inputs.find(name); in != inputs.end()) {
      feed.emplace(name, in->second);
    }
  }
  try {
    prepare_for_inputs(rest, feed);
  } catch (const ValueNeededAtRun&) {
    return true;
  }
  return false;
}

}  // namespace

void Session::Impl::stage(const ValueNeededAtRun& needed) {
  auto s = std::make_shared<Staged>();
  // Split the graph as given (its unprepared form when it was prepared), or, when its inputs
  // are fixed so that every run prepares alike, as preparation left it: the value may be in an
  // If branch inlined on the way, and what was folded need not be folded again per stage.
  const Graph& origin = given.prepared && given.unprepared ? *given.unprepared : given;
  const bool fixed = value_inputs.empty() &&
                     std::all_of(given.inputs.begin(), given.inputs.end(),
                                 [&](ValueId id) { return given.value(id).open_dims.empty(); });
  if (fixed) {
    // Every run prepares alike: the first stage is every node whose shapes follow from the
    // input shapes (the whole network before its post-processing), If branches inlined.
    Graph swept = origin;
    swept.unprepared.reset();
    swept.value_needed_at_run.clear();
    swept.topological_sort();
    const std::vector<char> dynamic = passes::mark_dynamic(swept);
    s->split = detail::split_static(swept, dynamic, needed.name);
  } else {
    s->split = detail::split_stages(origin, needed.name);
  }
  if (s->split.has_first) {
    s->first = std::make_unique<Session>(s->split.first, options, host);
  }
  staged = std::move(s);
}

std::vector<Tensor> Session::Impl::run_staged(Staged& s,
                                              const std::map<std::string, Tensor>& inputs) {
  std::map<std::string, Tensor> results;  // by value name
  std::vector<RegionProfile> profile;
  if (s.first) {
    std::map<std::string, Tensor> feed;
    const Graph& g = s.split.first;
    for (ValueId id : g.inputs) {
      auto it = inputs.find(g.value(id).name);
      if (it != inputs.end()) feed.emplace(it->first, it->second);
    }
    std::vector<Tensor> outs = s.first->run(feed);
    for (size_t i = 0; i < outs.size(); ++i) results[g.value(g.outputs[i]).name] = outs[i];
    profile = s.first->profile();
  }
  Session* rest = nullptr;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.made) {
      Graph rg = detail::rest_stage(s.split, results);
      for (ValueId id : rg.inputs) s.rest_inputs.push_back(rg.value(id).name);
      for (ValueId id : rg.outputs) s.rest_outputs.push_back(rg.value(id).name);
      s.eager = needs_more_stages(rg, s.rest_inputs, results, inputs);
      if (s.eager) {
        s.rest_graph = std::move(rg);
      } else {
        s.rest = std::make_unique<Session>(std::move(rg), options, host);
      }
      s.made = true;
    }
    rest = s.rest.get();
  }
  std::map<std::string, Tensor> feed;
  for (const std::string& name : s.rest_inputs) {
    auto it = results.find(name);
    if (it != results.end()) {
      feed.emplace(name, it->second);
    } else if (auto in = inputs.find(name); in != inputs.end()) {
      feed.emplace(name, in->second);
    }
  }
  // A run's own value decides the rest's plan: the rest prepares and plans per signature.
  const auto start = std::chrono::steady_clock::now();
  std::vector<Tensor> outs = s.eager ? evaluate_by_folding(s.rest_graph, feed) : rest->run(feed);
  for (size_t i = 0; i < outs.size() && i < s.rest_outputs.size(); ++i) {
    results[s.rest_outputs[i]] = outs[i];
  }
  if (s.eager) {
    RegionProfile host;
    host.region = static_cast<int>(profile.size());
    host.plugin = "host";
    host.time_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() -
                                                             start)
                       .count();
    profile.push_back(std::move(host));
  } else {
    for (RegionProfile p : rest->profile()) {
      p.region += static_cast<int>(profile.size());
      profile.push_back(std::move(p));
    }
  }
  std::vector<Tensor> outputs;
  for (const std::string& name : s.split.outputs) outputs.push_back(results.at(name));
  std::lock_guard<std::mutex> lock(mutex);
  staged_plan = merged_plan(s.first ? &s.first->plan() : nullptr, s.eager ? nullptr : &rest->plan(),
                            s.split.needed);
  if (s.eager) {
    staged_plan.warnings.push_back(
        "the " + std::to_string(s.rest_graph.nodes.size()) +
        " nodes after it compute more values that decide shapes (post-processing): they run on "
        "the host's reference kernels each run");
  }
  last_profile = std::move(profile);
  return outputs;
}

}  // namespace tessera
