// Session: target resolution, pack selection per target device, partition + compile with
// fallback (passing each node's tuned config), boundary buffer planning by liveness, and
// execution of the regions in order.
#include "tessera/session.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>

#include "partition/partitioner.hpp"
#include "plugins/pack_apply.hpp"
#include "tessera/error.hpp"

namespace tessera {

std::vector<std::string> parse_target_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t b = item.find_first_not_of(" \t");
    const size_t e = item.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}

namespace {

using partition::Target;

// Picks the device of `plugin` matching `selector`: the best score > 0.
std::vector<Target> resolve_targets(const PluginHost& host, const SessionOptions& options,
                                    ExecutionPlan& plan) {
  std::vector<std::string> specs = options.targets;
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
    std::vector<PluginDeviceInfo> devices;
    try {
      devices = plugin->probe(selector);
    } catch (const Error& e) {
      plan.warnings.push_back("target '" + spec + "' skipped: " + e.what());
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
      plan.warnings.push_back("target '" + spec + "' skipped: no usable device" +
                              (selector.empty() ? "" : " for selector '" + selector + "'") +
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

}  // namespace

struct Session::Impl {
  Graph graph;
  std::shared_ptr<const PluginHost> host;
  ExecutionPlan plan;

  struct Step {
    std::shared_ptr<PluginRegion> region;
    std::vector<ValueId> inputs, outputs;
  };
  std::vector<Step> steps;
  std::vector<int> value_buffer;                // per value: buffer index, -1 if none
  std::vector<std::vector<std::byte>> buffers;  // boundary buffers, reused by liveness
  std::vector<RegionProfile> last_profile;
  mutable std::mutex mutex;

  void build(const SessionOptions& options);
  void plan_buffers();
  void check_plan_memory(const std::vector<size_t>& buffer_sizes) const;
};

DevicePackPlan preview_device_pack(const std::string& plugin, const PluginDeviceInfo& device,
                                   const SessionOptions& options) {
  const detail::PackSources sources = detail::load_pack_sources(options);
  detail::DevicePacks packs = detail::select_device_packs(sources, plugin, plugin, device);
  for (const std::string& w : sources.warnings) packs.plan.warnings.push_back(w);
  return packs.plan;
}

void Session::Impl::build(const SessionOptions& options) {
  std::vector<Target> targets = resolve_targets(*host, options, plan);
  // Packs first: a bad --pack file fails before any compile work.
  const detail::PackSources pack_sources = detail::load_pack_sources(options);
  for (const std::string& w : pack_sources.warnings) plan.warnings.push_back(w);
  std::vector<detail::DevicePacks> device_packs;
  for (const Target& t : targets) {
    device_packs.push_back(
        detail::select_device_packs(pack_sources, t.spec, t.plugin->name(), t.info));
    plan.packs.push_back(device_packs.back().plan);
  }
  for (const Pack& p : pack_sources.file_packs) {
    const bool used = std::any_of(targets.begin(), targets.end(),
                                  [&](const Target& t) { return t.plugin->name() == p.plugin; });
    if (!used) {
      plan.warnings.push_back("--pack " + p.file + " is for plugin '" + p.plugin +
                              "', which is not among the targets; ignored");
    }
  }
  for (const detail::DevicePacks& d : device_packs) {
    for (const std::string& w : d.plan.warnings) plan.warnings.push_back("packs: " + w);
  }
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
        if (per_target->second.threads > 0) target_settings.num_threads = per_target->second.threads;
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
        std::string names;
        for (int n : nodes)
          names += (names.empty() ? "" : ", ") + graph.nodes[static_cast<size_t>(n)].name;
        if (!options.allow_fallback) {
          throw Error("region of " + std::to_string(nodes.size()) + " node(s) [" + names +
                      "] failed to compile on " + target.spec + ": " + e.what() +
                      " (partition.allow_fallback is false, so no other target is tried)");
        }
        plan.warnings.push_back("region of " + std::to_string(nodes.size()) + " node(s) [" + names +
                                "] failed to compile on " + target.spec + ": " + e.what() +
                                "; falling back to the next target");
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
    Step step;
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
    NodePlacement placement{graph.nodes[n].name,
                            graph.nodes[n].op_type,
                            target.plugin->name(),
                            target.info.name,
                            region_of[n],
                            assignment.reason[n],
                            ""};
    auto it = config_outcomes.find({t, static_cast<int>(n)});
    if (it != config_outcomes.end()) {
      placement.config = it->second.text;
      if (!it->second.warning.empty()) plan.warnings.push_back(it->second.warning);
    }
    plan.nodes.push_back(std::move(placement));
  }
  plan_buffers();
}

// Values produced by a region get a host buffer; a buffer is reused once every reader of its
// previous value has run. Graph outputs are never reused (they are copied out at the end).
void Session::Impl::plan_buffers() {
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
  check_plan_memory(sizes);
  buffers.clear();
  for (size_t bytes : sizes) buffers.emplace_back(bytes);
  plan.buffers = static_cast<int>(buffers.size());
  plan.buffer_bytes = 0;
  for (size_t bytes : sizes) plan.buffer_bytes += bytes;
}

// Refuses a plan whose constants, boundary buffers and outputs together exceed the memory limit,
// before the buffers are allocated, naming the largest value so the user knows what to shrink.
void Session::Impl::check_plan_memory(const std::vector<size_t>& buffer_sizes) const {
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
  impl_->graph = std::move(graph);
  impl_->host = std::move(host);
  impl_->build(options);
}

Session::~Session() = default;

std::vector<Tensor> Session::run(const std::map<std::string, Tensor>& inputs) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const Graph& graph = impl_->graph;
  const std::string where = graph.source.empty() ? "graph" : graph.source;
  std::vector<const void*> location(graph.values.size(), nullptr);
  for (size_t i = 0; i < graph.values.size(); ++i) {
    if (graph.values[i].constant) location[i] = graph.values[i].constant->raw();
  }
  for (const auto& [name, tensor] : inputs) {
    const ValueId id = graph.find_value(name);
    if (id == kNoValue ||
        std::find(graph.inputs.begin(), graph.inputs.end(), id) == graph.inputs.end()) {
      throw Error(where + ": '" + name + "' is not an input of the model");
    }
  }
  for (ValueId id : graph.inputs) {
    const Value& v = graph.value(id);
    auto it = inputs.find(v.name);
    if (it == inputs.end()) throw Error(where + ": no tensor given for input '" + v.name + "'");
    if (it->second.dtype() != v.dtype || it->second.shape() != v.shape) {
      throw Error(where + ": input '" + v.name + "' expects " + dtype_name(v.dtype) + " " +
                  shape_str(v.shape) + ", got " + dtype_name(it->second.dtype()) + " " +
                  shape_str(it->second.shape()));
    }
    location[static_cast<size_t>(id)] = it->second.raw();
  }
  std::vector<RegionProfile> profile;
  for (size_t s = 0; s < impl_->steps.size(); ++s) {
    Impl::Step& step = impl_->steps[s];
    std::vector<const void*> in;
    std::vector<void*> out;
    for (ValueId v : step.inputs) in.push_back(location[static_cast<size_t>(v)]);
    for (ValueId v : step.outputs) {
      void* p =
          impl_->buffers[static_cast<size_t>(impl_->value_buffer[static_cast<size_t>(v)])].data();
      out.push_back(p);
      location[static_cast<size_t>(v)] = p;
    }
    const auto start = std::chrono::steady_clock::now();
    step.region->execute(in.data(), out.data());
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    profile.push_back(
        {static_cast<int>(s), step.region->plugin().name(), us, step.region->last_profile()});
  }
  std::vector<Tensor> outputs;
  for (ValueId id : graph.outputs) {
    const Value& v = graph.value(id);
    Tensor t(v.dtype, v.shape);
    if (t.nbytes() > 0) std::memcpy(t.raw(), location[static_cast<size_t>(id)], t.nbytes());
    outputs.push_back(std::move(t));
  }
  impl_->last_profile = std::move(profile);
  return outputs;
}

const ExecutionPlan& Session::plan() const {
  return impl_->plan;
}

std::vector<RegionProfile> Session::profile() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->last_profile;
}

const Graph& Session::graph() const {
  return impl_->graph;
}
const PluginHost& Session::plugin_host() const {
  return *impl_->host;
}

}  // namespace tessera
