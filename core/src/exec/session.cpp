// Session: target resolution, pack selection per target device, partition + compile with
// fallback (passing each node's tuned config), boundary buffer planning by liveness, and
// execution of the regions in order.
#include "tessera/session.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <sstream>

#include "partition/partitioner.hpp"
#include "plugins/pack_apply.hpp"
#include "tessera/error.hpp"
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
    std::vector<PluginDeviceInfo> devices;
    try {
      devices = plugin->probe(selector);
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
    const auto settings = options.target_settings.find(spec);
    if (settings != options.target_settings.end()) {
      try {
        plugin->check_options(settings->second.options);
      } catch (const Error& e) {
        const std::string& origin = settings->second.origin;
        throw Error((origin.empty() ? "" : origin + ": ") + "target '" + spec + "': " + e.what());
      }
    }
    Target t;
    t.plugin = plugin;
    t.spec = spec;
    t.device = best;
    t.info = devices[static_cast<size_t>(best)];
    plan.targets.push_back(spec + " -> " + t.info.name + " (" + t.info.kind + ", score " +
                           std::to_string(t.info.score) + ")");
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

}  // namespace

// One preparation of the graph for one input signature: partitioned, compiled, buffers planned.
struct Planned {
  struct Step {
    std::shared_ptr<PluginRegion> region;
    std::vector<ValueId> inputs, outputs;
  };
  Graph graph;
  ExecutionPlan plan;
  std::vector<Step> steps;
  std::vector<int> value_buffer;     // per value: buffer index, -1 if none
  std::vector<size_t> buffer_sizes;  // boundary buffers, reused by liveness
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
  // Plans by input signature, most recently used first; `current` ran last and owns `buffers`.
  std::list<std::pair<std::string, std::shared_ptr<Planned>>> plans;
  std::shared_ptr<Planned> current;
  std::vector<std::vector<std::byte>> buffers;
  ExecutionPlan waiting_plan;  // plan() before the first run of a graph that needs input values
  std::vector<RegionProfile> last_profile;
  mutable std::mutex mutex;

  void resolve();
  std::shared_ptr<Planned> build(Graph graph) const;
  void plan_buffers(Planned& p) const;
  void check_plan_memory(const Planned& p) const;
  std::string signature(const std::map<std::string, Tensor>* inputs) const;
  Planned& planned_for(const std::map<std::string, Tensor>& inputs);
  void make_current(const std::shared_ptr<Planned>& p);
};

DevicePackPlan preview_device_pack(const std::string& plugin, const PluginDeviceInfo& device,
                                   const SessionOptions& options) {
  const detail::PackSources sources = detail::load_pack_sources(options);
  detail::DevicePacks packs = detail::select_device_packs(sources, plugin, plugin, device);
  for (const std::string& w : sources.warnings) packs.plan.warnings.push_back(w);
  return packs.plan;
}

void Session::Impl::resolve() {
  targets = resolve_targets(*host, options, base_plan);
  // Packs first: a bad --pack file fails before any compile work.
  const detail::PackSources pack_sources = detail::load_pack_sources(options);
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

std::shared_ptr<Planned> Session::Impl::build(Graph prepared) const {
  auto result = std::make_shared<Planned>();
  result->graph = std::move(prepared);
  result->plan = base_plan;
  const Graph& graph = result->graph;
  ExecutionPlan& plan = result->plan;
  std::vector<Planned::Step>& steps = result->steps;
  // Per (target, graph node): the config outcome of the node's latest compile on that target.
  std::map<std::pair<int, int>, detail::NodeConfigOutcome> config_outcomes;

  const auto answers = partition::query_nodes(graph, targets);
  RegionCompileSettings settings;
  settings.num_threads = options.threads;
  settings.precision = options.precision;
  settings.cache_dir = options.cache_dir;
  settings.dump_dir = options.dump_kernels_dir;

  std::vector<partition::Exclusion> excluded;
  std::map<std::pair<int, std::vector<int>>, std::shared_ptr<PluginRegion>> compiled;
  partition::Assignment assignment;
  std::vector<std::vector<int>> regions;
  // Each failed compile rules out (node, target) pairs, so this ends.
  for (;;) {
    assignment =
        partition::assign_nodes(graph, targets, answers, excluded, options.min_island_nodes);
    regions = partition::form_regions(graph, assignment.target);
    bool failed = false;
    for (const std::vector<int>& nodes : regions) {
      const int t = assignment.target[static_cast<size_t>(nodes[0])];
      auto key = std::make_pair(t, nodes);
      if (compiled.count(key)) continue;
      const Target& target = targets[static_cast<size_t>(t)];
      RegionCompileSettings target_settings = settings;
      const auto per_target = options.target_settings.find(target.spec);
      if (per_target != options.target_settings.end()) {
        if (per_target->second.threads > 0)
          target_settings.num_threads = per_target->second.threads;
        target_settings.target_options = per_target->second.options;
      }
      const detail::DevicePacks& packs = device_packs[static_cast<size_t>(t)];
      if (packs.pack) target_settings.pack_path = packs.pack->file;
      target_settings.choose_config = [&, t](const NodeConfigRequest& request) {
        detail::NodeConfigOutcome outcome =
            detail::choose_node_config(device_packs[static_cast<size_t>(t)], request,
                                       graph.nodes[static_cast<size_t>(request.graph_node)].name);
        std::optional<NodeConfigChoice> choice = outcome.choice;
        config_outcomes[{t, request.graph_node}] = std::move(outcome);
        return choice;
      };
      if (!packs.pack) {
        // Nothing to apply: skip describe_node calls, but still say why per node.
        target_settings.choose_config = nullptr;
        for (int n : nodes) {
          NodeConfigRequest request;
          request.graph_node = n;
          config_outcomes[{t, n}] = detail::choose_node_config(packs, request, "");
        }
      }
      try {
        compiled[key] =
            PluginRegion::compile(target.plugin, target.device, graph, nodes, target_settings);
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
          throw Error(region + " (partition.allow_fallback is false, so no other target is "
                               "tried; --allow-fallback or partition.allow_fallback: true "
                               "moves it to the next target)");
        }
        plan.warnings.push_back(region + "; falling back to the next target");
        for (int n : nodes) excluded.push_back({n, t, "compile failed: " + std::string(e.what())});
        failed = true;
      }
    }
    if (!failed) break;
  }

  std::vector<int> region_of(graph.nodes.size(), -1);
  for (size_t r = 0; r < regions.size(); ++r) {
    const int t = assignment.target[static_cast<size_t>(regions[r][0])];
    const Target& target = targets[static_cast<size_t>(t)];
    Planned::Step step;
    step.region = compiled.at({t, regions[r]});
    step.inputs = step.region->input_values();
    step.outputs = step.region->output_values();
    RegionPlacement rp;
    rp.id = static_cast<int>(r);
    rp.plugin = target.plugin->name();
    rp.device = target.info.name;
    for (int n : regions[r]) {
      region_of[static_cast<size_t>(n)] = static_cast<int>(r);
      rp.nodes.push_back(graph.nodes[static_cast<size_t>(n)].name);
      rp.estimated_us += answers[static_cast<size_t>(n)][static_cast<size_t>(t)].cost_us;
    }
    for (ValueId v : step.inputs) rp.inputs.push_back(graph.value(v).name);
    for (ValueId v : step.outputs) rp.outputs.push_back(graph.value(v).name);
    plan.regions.push_back(std::move(rp));
    steps.push_back(std::move(step));
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const int t = assignment.target[n];
    const Target& target = targets[static_cast<size_t>(t)];
    NodePlacement placement;
    placement.node = graph.nodes[n].name;
    placement.op_type = graph.nodes[n].op_type;
    placement.plugin = target.plugin->name();
    placement.device = target.info.name;
    placement.region = region_of[n];
    placement.reason = assignment.reason[n];
    const partition::NodeAnswer& answer = answers[n][static_cast<size_t>(t)];
    placement.estimate = answer.estimate;
    placement.estimate_us = answer.cost_us;
    auto it = config_outcomes.find({t, static_cast<int>(n)});
    if (it != config_outcomes.end()) {
      placement.config = it->second.text;
      if (!it->second.warning.empty()) plan.warnings.push_back(it->second.warning);
    }
    plan.nodes.push_back(std::move(placement));
  }
  warn_of_reference_share(targets, plan);
  plan_buffers(*result);
  return result;
}

// Values produced by a region get a host buffer; a buffer is reused once every reader of its
// previous value has run. Graph outputs are never reused (they are copied out at the end).
void Session::Impl::plan_buffers(Planned& p) const {
  const Graph& graph = p.graph;
  const std::vector<Planned::Step>& steps = p.steps;
  std::vector<int>& value_buffer = p.value_buffer;
  ExecutionPlan& plan = p.plan;
  const int kForever = INT_MAX;
  std::vector<int> last_use(graph.values.size(), -1);
  for (size_t s = 0; s < steps.size(); ++s) {
    for (ValueId v : steps[s].inputs) last_use[static_cast<size_t>(v)] = static_cast<int>(s);
  }
  for (ValueId v : graph.outputs) last_use[static_cast<size_t>(v)] = kForever;
  value_buffer.assign(graph.values.size(), -1);
  std::vector<size_t> sizes;
  std::vector<int> busy_until;  // per buffer: last step reading its current value
  for (size_t s = 0; s < steps.size(); ++s) {
    for (ValueId v : steps[s].outputs) {
      const Value& value = graph.value(v);
      // Shape inference already refused values over the limit; this stays checked because a
      // wrapped size here would be a buffer smaller than what the kernel writes.
      const size_t bytes =
          static_cast<size_t>(std::max<int64_t>(1, shape_nbytes(value.shape, value.dtype)));
      int best = -1;
      for (size_t b = 0; b < sizes.size(); ++b) {
        if (busy_until[b] >= static_cast<int>(s)) continue;
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
        busy_until.push_back(-1);
      }
      sizes[static_cast<size_t>(best)] = std::max(sizes[static_cast<size_t>(best)], bytes);
      busy_until[static_cast<size_t>(best)] =
          std::max(last_use[static_cast<size_t>(v)], static_cast<int>(s));
      value_buffer[static_cast<size_t>(v)] = best;
      ++plan.boundary_values;
    }
  }
  p.buffer_sizes = std::move(sizes);
  check_plan_memory(p);
  plan.buffers = static_cast<int>(p.buffer_sizes.size());
  plan.buffer_bytes = 0;
  for (size_t bytes : p.buffer_sizes) plan.buffer_bytes += bytes;
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

Session::Session(Graph graph, const SessionOptions& options)
    : Session(std::move(graph), options, [&] {
        PluginHostOptions host_options;
        host_options.dirs = options.plugin_dirs;
        host_options.use_environment = options.use_plugin_environment;
        host_options.use_default_dirs = options.use_default_plugin_dirs;
        host_options.allow_shadowing = options.allow_plugin_shadowing;
        return std::make_shared<const PluginHost>(host_options);
      }()) {}

Session::Session(Graph graph, const SessionOptions& options, std::shared_ptr<const PluginHost> host)
    : impl_(std::make_unique<Impl>()) {
  if (!host) throw Error("Session: no plugin host given");
  if (options.plan_cache_size < 1) {
    throw Error("Session: plan_cache_size must be at least 1, got " +
                std::to_string(options.plan_cache_size));
  }
  Impl& impl = *impl_;
  impl.given = std::move(graph);
  impl.host = std::move(host);
  impl.options = options;
  impl.value_inputs = impl.given.value_inputs;
  impl.replans = impl.given.unprepared != nullptr || !impl.value_inputs.empty();
  impl.resolve();
  if (!impl.value_inputs.empty()) {
    // Shapes depend on input values: each run's values are prepared and planned (then cached).
    impl.waiting_plan = impl.base_plan;
    std::string names;
    for (ValueId id : impl.value_inputs) {
      names += (names.empty() ? "'" : ", '") + impl.given.value(id).name + "'";
    }
    impl.waiting_plan.warnings.push_back(
        "shapes depend on the values of input(s) " + names +
        ": the graph is prepared and planned at the first run, and again for other values");
    impl.waiting_plan.value_inputs = names;
    return;
  }
  auto first = impl.build(impl.given);
  first->plan.plan_number = ++impl.plans_made;
  first->plan.input_signature = impl.signature(nullptr);
  impl.plans.emplace_front(first->plan.input_signature, first);
  impl.make_current(first);
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
  // Only the plan that runs holds boundary buffers: cached plans keep their compiled regions,
  // not their memory.
  buffers.clear();
  current = p;
  for (size_t bytes : p->buffer_sizes) buffers.emplace_back(bytes);
}

Planned& Session::Impl::planned_for(const std::map<std::string, Tensor>& inputs) {
  const std::string where = given.source.empty() ? "graph" : given.source;
  for (const auto& [name, tensor] : inputs) {
    const ValueId id = given.find_value(name);
    if (id == kNoValue ||
        std::find(given.inputs.begin(), given.inputs.end(), id) == given.inputs.end()) {
      throw Error(where + ": '" + name + "' is not an input of the model (its inputs: " +
                  given.input_names() + ")");
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
    return *current;
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
  return *current;
}

std::vector<Tensor> Session::run(const std::map<std::string, Tensor>& inputs) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  Planned& planned = impl_->planned_for(inputs);
  const Graph& graph = planned.graph;
  std::vector<const void*> location(graph.values.size(), nullptr);
  for (size_t i = 0; i < graph.values.size(); ++i) {
    if (graph.values[i].constant) location[i] = graph.values[i].constant->raw();
  }
  for (ValueId id : graph.inputs) {
    location[static_cast<size_t>(id)] = inputs.at(graph.value(id).name).raw();
  }
  // The returned tensors are allocated first and the steps producing graph outputs write into
  // them, so an output is never copied out of the boundary buffers (for a segmentation map, 4 MiB
  // zero-filled and copied per run). An output listed twice, or one no step produces (an input or
  // a constant), is copied below.
  std::vector<Tensor> outputs;
  std::vector<void*> output_memory(graph.values.size(), nullptr);
  for (ValueId id : graph.outputs) {
    const Value& v = graph.value(id);
    outputs.emplace_back(v.dtype, v.shape, Tensor::Uninitialized{});
    if (output_memory[static_cast<size_t>(id)] == nullptr &&
        location[static_cast<size_t>(id)] == nullptr) {
      output_memory[static_cast<size_t>(id)] = outputs.back().raw();
    }
  }
  std::vector<RegionProfile> profile;
  const auto run_start = std::chrono::steady_clock::now();
  for (size_t s = 0; s < planned.steps.size(); ++s) {
    Planned::Step& step = planned.steps[s];
    std::vector<const void*> in;
    std::vector<void*> out;
    for (ValueId v : step.inputs) in.push_back(location[static_cast<size_t>(v)]);
    for (ValueId v : step.outputs) {
      void* p = output_memory[static_cast<size_t>(v)];
      if (p == nullptr) {
        p = impl_->buffers[static_cast<size_t>(planned.value_buffer[static_cast<size_t>(v)])]
                .data();
      }
      out.push_back(p);
      location[static_cast<size_t>(v)] = p;
    }
    const auto start = std::chrono::steady_clock::now();
    step.region->execute(in.data(), out.data());
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    const double start_us =
        std::chrono::duration<double, std::micro>(start - run_start).count();
    profile.push_back({static_cast<int>(s), step.region->plugin().name(), us, start_us,
                       step.region->last_profile()});
  }
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    Tensor& t = outputs[i];
    const void* produced = location[static_cast<size_t>(graph.outputs[i])];
    if (t.nbytes() > 0 && produced != t.raw()) std::memcpy(t.raw(), produced, t.nbytes());
  }
  impl_->last_profile = std::move(profile);
  return outputs;
}

const ExecutionPlan& Session::plan() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->current ? impl_->current->plan : impl_->waiting_plan;
}

std::vector<RegionProfile> Session::profile() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->last_profile;
}

const Graph& Session::graph() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->current ? impl_->current->graph : impl_->given;
}
const PluginHost& Session::plugin_host() const {
  return *impl_->host;
}

}  // namespace tessera
