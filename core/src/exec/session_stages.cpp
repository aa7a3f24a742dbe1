// A session whose shapes follow from values the model computes runs in two stages (see
// exec/stages.hpp): making them, and running them.
#include "exec/session_impl.hpp"

namespace tessera {

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

// The second stage's inputs by `names`: the first stage's results, else the run's inputs.
std::map<std::string, Tensor> rest_feed(const std::vector<std::string>& names,
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
  return feed;
}

// Whether the second stage, prepared for this run's values, still meets a value it computes
// itself that decides shapes.
bool needs_more_stages(const Graph& rest, const std::map<std::string, Tensor>& feed) {
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
  // Split the graph as given (its unprepared form when it was prepared).
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
      s.eager = needs_more_stages(rg, rest_feed(s.rest_inputs, results, inputs));
      if (s.eager) {
        s.rest_graph = std::move(rg);
      } else {
        s.rest = std::make_unique<Session>(std::move(rg), options, host);
      }
      s.made = true;
    }
    rest = s.rest.get();
  }
  const std::map<std::string, Tensor> feed = rest_feed(s.rest_inputs, results, inputs);
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
