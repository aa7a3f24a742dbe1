// Planning a session: target resolution, pack selection per target device, partition and
// compile with fallback (passing each node's tuned config), the regions' dependency graph and
// boundary buffer planning by liveness (see session.hpp).
#include "exec/session_impl.hpp"

namespace tessera {
namespace session_detail {

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
                    "target (`allow_fallback`)");
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

}  // namespace session_detail

using session_detail::copies_to_device;
using session_detail::resolve_targets;
using session_detail::warn_of_reference_share;

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
      base_plan.warnings.push_back("pack file " + p.file + " is for plugin '" + p.plugin +
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
                      " (no other target is tried without `allow_fallback`, which "
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
                  " (`replan_package` plans its graph again for the devices here)");
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

}  // namespace tessera
