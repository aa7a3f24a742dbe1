// Per-node capability queries, node assignment with island merge-back, and region formation.
#include "partition/partitioner.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>

#include "plugins/plugin_text.hpp"
#include "plugins/region_desc.hpp"
#include "tessera/error.hpp"

namespace tessera::partition {
namespace {

// Groups of at most this many nodes count as islands that may merge back into a neighbour.
// Larger groups keep the priority order the user asked for even when the estimate disagrees.
constexpr size_t kIslandMaxNodes = 4;

std::string format_us(double us) {
  char text[32];
  std::snprintf(text, sizeof(text), us < 10 ? "%.2f" : "%.0f", us);
  return text;
}

size_t value_bytes(const Value& v) {
  return static_cast<size_t>(shape_numel(v.shape)) * dtype_size(v.dtype);
}

class UnionFind {
 public:
  explicit UnionFind(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int find(int x) {
    while (parent_[static_cast<size_t>(x)] != x) {
      parent_[static_cast<size_t>(x)] =
          parent_[static_cast<size_t>(parent_[static_cast<size_t>(x)])];
      x = parent_[static_cast<size_t>(x)];
    }
    return x;
  }
  void unite(int a, int b) { parent_[static_cast<size_t>(find(a))] = find(b); }

 private:
  std::vector<int> parent_;
};

// Connected components of nodes joined by data edges between nodes of the same target, restricted
// to nodes with `in_scope` set; components ordered by their first node.
std::vector<std::vector<int>> same_target_components(const Graph& graph,
                                                     const std::vector<int>& target,
                                                     const std::vector<int>& order,
                                                     const std::vector<char>& in_scope) {
  const std::vector<int> producers = graph.producers();
  UnionFind uf(graph.nodes.size());
  for (int n : order) {
    for (ValueId in : graph.nodes[static_cast<size_t>(n)].inputs) {
      if (in == kNoValue) continue;
      const int p = producers[static_cast<size_t>(in)];
      if (p >= 0 && in_scope[static_cast<size_t>(p)] &&
          target[static_cast<size_t>(p)] == target[static_cast<size_t>(n)]) {
        uf.unite(p, n);
      }
    }
  }
  std::map<int, size_t> index_of_root;
  std::vector<std::vector<int>> groups;
  for (int n : order) {
    const int root = uf.find(n);
    auto it = index_of_root.find(root);
    if (it == index_of_root.end()) {
      index_of_root[root] = groups.size();
      groups.push_back({n});
    } else {
      groups[it->second].push_back(n);
    }
  }
  return groups;
}

}  // namespace

namespace {

// answers[n][t] from target t's answer `support` (status `status`) for graph node n.
void take_answer(const Graph& graph, const Target& target, size_t n, tsr_status status,
                 tsr_support& support, NodeAnswer& a) {
  support.reason[sizeof(support.reason) - 1] = '\0';
  a.supported = status == TSR_OK && support.supported == 1;
  a.cost_us = support.cost_us;
  // Plugin text: a control character in it would reach terminals through plans and errors.
  a.reason = detail::plugin_text(support.reason);
  if (a.supported) {
    if (target.throughput.known()) {
      const Estimate e = estimate(node_work(graph, graph.nodes[n]), target.throughput);
      a.cost_us = e.us;
      a.estimate = e.text;
    } else {
      a.estimate = format_us(a.cost_us) + " us (the plugin's estimate: no device family " +
                   "with throughput figures matched this device)";
    }
  }
  if (status != TSR_OK) {
    a.reason = "query failed (status " + std::to_string(status) + ")" +
               (a.reason.empty() ? "" : ": " + a.reason);
  } else if (!a.supported && a.reason.empty()) {
    a.reason = "no reason given";
  }
}

// Asks target t about every node at once (ABI 2.2 query_subgraph), `whole` being the graph as one
// candidate region; false when the plugin has no such slot or the call failed (then core asks
// per node).
bool query_subgraph(const Graph& graph, const Target& target, size_t t,
                    const detail::RegionDesc& whole,
                    std::vector<std::vector<NodeAnswer>>& answers) {
  const PluginInstance& plugin = *target.plugin;
  if (!plugin.has_query_subgraph()) return false;
  std::vector<tsr_support> got(graph.nodes.size());
  for (tsr_support& s : got) {
    s.struct_size = sizeof(tsr_support);
    s.fused_into = -1;
  }
  char text[512] = {0};
  tsr_status status;
  try {
    std::lock_guard<std::mutex> lock(plugin.call_mutex());
    status = plugin.table().query_subgraph(plugin.handle(), target.device.c_str(), whole.get(),
                                           got.data(), tsr_message{text, sizeof(text)});
  } catch (...) {
    return false;
  }
  if (status != TSR_OK) return false;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    NodeAnswer& a = answers[n][t];
    take_answer(graph, target, n, TSR_OK, got[n], a);
    const int32_t into = got[n].fused_into;
    if (a.supported && into >= 0 && static_cast<size_t>(into) < graph.nodes.size() &&
        static_cast<size_t>(into) != n) {
      // Computed inside another node's kernel: no launch and no pass over memory of its own
      // (while that node runs on the same target; the estimate does not know the partition yet).
      a.cost_us = 0.0;
      a.estimate = "0 us (the plugin fuses it into node '" +
                   graph.nodes[static_cast<size_t>(into)].name + "')";
    }
  }
  return true;
}

}  // namespace

std::vector<std::vector<NodeAnswer>> query_nodes(const Graph& graph,
                                                 const std::vector<Target>& targets) {
  const auto consumers = detail::value_consumers(graph);
  std::vector<std::vector<NodeAnswer>> answers(graph.nodes.size(),
                                               std::vector<NodeAnswer>(targets.size()));
  std::vector<char> answered(targets.size(), 0);
  // The graph as one candidate region, built once for every target that answers over it.
  std::unique_ptr<detail::RegionDesc> whole;
  const bool any_subgraph = std::any_of(targets.begin(), targets.end(), [](const Target& t) {
    return t.plugin->has_query_subgraph();
  });
  if (any_subgraph && !graph.nodes.empty()) {
    std::vector<int> all(graph.nodes.size());
    std::iota(all.begin(), all.end(), 0);
    try {
      whole = std::make_unique<detail::RegionDesc>(graph, all, consumers);
    } catch (const Error&) {
      // Asked node by node below, where each node's own error is recorded.
    }
  }
  for (size_t t = 0; t < targets.size() && whole; ++t) {
    answered[t] = query_subgraph(graph, targets[t], t, *whole, answers);
  }
  if (std::all_of(answered.begin(), answered.end(), [](char a) { return a != 0; })) {
    return answers;
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    std::unique_ptr<detail::RegionDesc> desc;
    try {
      desc = std::make_unique<detail::RegionDesc>(graph, std::vector<int>{static_cast<int>(n)},
                                                  consumers);
    } catch (const Error& e) {
      for (size_t t = 0; t < targets.size(); ++t) {
        if (!answered[t]) answers[n][t].reason = e.what();
      }
      continue;
    }
    for (size_t t = 0; t < targets.size(); ++t) {
      if (answered[t]) continue;
      const PluginInstance& plugin = *targets[t].plugin;
      tsr_support support{};
      support.struct_size = sizeof(tsr_support);
      support.fused_into = -1;
      tsr_status status;
      try {
        std::lock_guard<std::mutex> lock(plugin.call_mutex());
        status = plugin.table().query_node(plugin.handle(), targets[t].device.c_str(), desc->get(),
                                           0, &support);
      } catch (...) {
        answers[n][t].reason = "query threw a C++ exception across the C boundary";
        continue;
      }
      take_answer(graph, targets[t], n, status, support, answers[n][t]);
    }
  }
  return answers;
}

namespace {

constexpr int kHost = -1;  // graph inputs/outputs live in host memory

// Each node on the first target, in priority order, that supports it and is not ruled out; the
// reason is the chain of answers up to it. Throws naming the node when none can run it.
Assignment first_supported(const Graph& graph, const std::vector<Target>& targets,
                           const std::vector<std::vector<NodeAnswer>>& answers,
                           const std::map<std::pair<int, int>, std::string>& ruled_out,
                           const std::function<std::string(int, int)>& supported_text) {
  const size_t num_nodes = graph.nodes.size();
  Assignment result;
  result.target.assign(num_nodes, -1);
  result.reason.resize(num_nodes);
  for (size_t n = 0; n < num_nodes; ++n) {
    std::string chain;
    for (size_t t = 0; t < targets.size() && result.target[n] < 0; ++t) {
      const int ni = static_cast<int>(n), ti = static_cast<int>(t);
      if (!chain.empty()) chain += " -> ";
      auto it = ruled_out.find({ni, ti});
      if (it != ruled_out.end()) {
        chain += targets[t].spec + ": " + it->second;
      } else if (answers[n][t].supported) {
        result.target[n] = ti;
        chain += supported_text(ni, ti);
      } else {
        chain += targets[t].spec + ": unsupported: " + answers[n][t].reason;
      }
    }
    if (result.target[n] < 0) {
      throw Error(graph.describe(graph.nodes[n]) + ": no target can run it (" + chain +
                  "); add a target that supports it, e.g. 'reference' at the end of the targets");
    }
    result.reason[n] = chain;
  }
  return result;
}

// The values crossing the boundary of `group` (same-target nodes), each with the target on the
// other side (kHost for graph inputs and outputs), each edge once.
std::set<std::pair<ValueId, int>> boundary_edges(const Graph& graph, const std::vector<int>& group,
                                                 const std::vector<int>& producers,
                                                 const std::vector<std::vector<int>>& consumers,
                                                 const std::vector<int>& target) {
  const std::set<int> members(group.begin(), group.end());
  std::set<std::pair<ValueId, int>> edges;
  for (int n : group) {
    const Node& node = graph.nodes[static_cast<size_t>(n)];
    for (ValueId in : node.inputs) {
      if (in == kNoValue || graph.value(in).constant) continue;
      const int p = producers[static_cast<size_t>(in)];
      if (p < 0) {
        edges.insert({in, kHost});
      } else if (members.count(p) == 0) {
        edges.insert({in, target[static_cast<size_t>(p)]});
      }
    }
    for (ValueId out : node.outputs) {
      if (out == kNoValue) continue;
      if (std::find(graph.outputs.begin(), graph.outputs.end(), out) != graph.outputs.end()) {
        edges.insert({out, kHost});
      }
      for (int c : consumers[static_cast<size_t>(out)]) {
        if (members.count(c) == 0) edges.insert({out, target[static_cast<size_t>(c)]});
      }
    }
  }
  return edges;
}

}  // namespace

Assignment assign_nodes(const Graph& graph, const std::vector<Target>& targets,
                        const std::vector<std::vector<NodeAnswer>>& answers,
                        const std::vector<Exclusion>& excluded, int min_island_nodes) {
  const size_t num_nodes = graph.nodes.size();
  std::map<std::pair<int, int>, std::string> ruled_out;
  for (const Exclusion& e : excluded) ruled_out[{e.node, e.target}] = e.reason;
  auto allowed = [&](int n, int t) {
    return answers[static_cast<size_t>(n)][static_cast<size_t>(t)].supported &&
           ruled_out.count({n, t}) == 0;
  };
  auto supported_text = [&](int n, int t) {
    const NodeAnswer& a = answers[static_cast<size_t>(n)][static_cast<size_t>(t)];
    return targets[static_cast<size_t>(t)].spec + ": supported, est " + format_us(a.cost_us) +
           " us" + (a.reason.empty() ? "" : " (" + a.reason + ")");
  };
  auto launch_us = [&](int t) {
    const Throughput& tp = targets[static_cast<size_t>(t)].throughput;
    return tp.known() ? tp.launch_us : kLaunchOverheadUs;
  };

  Assignment result = first_supported(graph, targets, answers, ruled_out, supported_text);

  // Island merge-back.
  const std::vector<int> producers = graph.producers();
  const auto consumers = detail::value_consumers(graph);
  std::vector<int> order(num_nodes);
  std::iota(order.begin(), order.end(), 0);
  const std::vector<char> all(num_nodes, 1);
  auto transfer_us = [&](ValueId v, int t) {
    if (t == kHost || targets[static_cast<size_t>(t)].host_memory()) return 0.0;
    const Throughput& tp = targets[static_cast<size_t>(t)].throughput;
    const double bytes_per_us = tp.transfer_gbps > 0 ? tp.transfer_gbps * 1e3 : kTransferBytesPerUs;
    return static_cast<double>(value_bytes(graph.value(v))) / bytes_per_us;
  };
  // Two targets of one memory domain hand values over in its buffers: no transfer at all.
  auto shared_domain = [&](int a, int b) {
    if (a == kHost || b == kHost) return false;
    const std::string& domain = targets[static_cast<size_t>(a)].domain;
    return !domain.empty() && domain == targets[static_cast<size_t>(b)].domain;
  };
  for (size_t pass = 0; pass < num_nodes * targets.size() + 1; ++pass) {
    bool changed = false;
    for (const std::vector<int>& group : same_target_components(graph, result.target, order, all)) {
      const bool too_small = group.size() < static_cast<size_t>(std::max(min_island_nodes, 1));
      if (group.size() > kIslandMaxNodes && !too_small) continue;
      const int current = result.target[static_cast<size_t>(group[0])];
      const std::set<std::pair<ValueId, int>> edges =
          boundary_edges(graph, group, producers, consumers, result.target);
      auto cost_on = [&](int t) {
        double cost = 0;
        for (int n : group) cost += answers[static_cast<size_t>(n)][static_cast<size_t>(t)].cost_us;
        if (t == current && !targets[static_cast<size_t>(t)].host_memory()) cost += launch_us(t);
        for (const auto& [v, other] : edges) {
          if (other != t && !shared_domain(t, other)) {
            cost += transfer_us(v, t) + transfer_us(v, other);
          }
        }
        return cost;
      };
      const double stay = cost_on(current);
      int best = -1;
      double best_cost = stay;
      int cheapest = -1;  // any neighbour able to take the group, for islands below the minimum
      double cheapest_cost = 0;
      std::set<int> neighbours;
      for (const auto& edge : edges) {
        if (edge.second != kHost && edge.second != current) neighbours.insert(edge.second);
      }
      for (int t : neighbours) {
        bool ok = true;
        for (int n : group) ok = ok && allowed(n, t);
        if (!ok) continue;
        const double c = cost_on(t);
        if (cheapest < 0 || c < cheapest_cost) {
          cheapest = t;
          cheapest_cost = c;
        }
        // The deployment's min_island_nodes may send an island to reference; an estimate never.
        if (targets[static_cast<size_t>(t)].last_resort()) continue;
        if (c < best_cost - 1e-9) {
          best = t;
          best_cost = c;
        }
      }
      if (best < 0 && too_small && cheapest >= 0) {
        for (int n : group) {
          result.reason[static_cast<size_t>(n)] =
              supported_text(n, current) + ", but this island of " + std::to_string(group.size()) +
              " node(s) is below partition.min_island_nodes = " + std::to_string(min_island_nodes) +
              " -> merged back: " + supported_text(n, cheapest);
          result.target[static_cast<size_t>(n)] = cheapest;
        }
        changed = true;
        break;
      }
      if (best < 0) continue;
      for (int n : group) {
        result.reason[static_cast<size_t>(n)] =
            supported_text(n, current) + ", but this island of " + std::to_string(group.size()) +
            " node(s) costs est " + format_us(stay) + " us with boundary transfers vs " +
            format_us(best_cost) + " us on " + targets[static_cast<size_t>(best)].spec +
            " -> merged back: " + supported_text(n, best);
        result.target[static_cast<size_t>(n)] = best;
      }
      changed = true;
      break;  // groups changed; recompute them
    }
    if (!changed) break;
  }
  return result;
}

std::vector<std::vector<int>> form_regions(const Graph& graph, const std::vector<int>& target) {
  const size_t num_nodes = graph.nodes.size();
  const std::vector<int> producers = graph.producers();
  const auto consumers = detail::value_consumers(graph);
  // Topological order that keeps going on the same target while it can, so same-target nodes
  // end up adjacent.
  std::vector<int> pending(num_nodes, 0);
  for (size_t n = 0; n < num_nodes; ++n) {
    std::set<int> deps;
    for (ValueId in : graph.nodes[n].inputs) {
      if (in != kNoValue && producers[static_cast<size_t>(in)] >= 0) {
        deps.insert(producers[static_cast<size_t>(in)]);
      }
    }
    pending[n] = static_cast<int>(deps.size());
  }
  std::set<int> ready;
  for (size_t n = 0; n < num_nodes; ++n) {
    if (pending[n] == 0) ready.insert(static_cast<int>(n));
  }
  std::vector<int> order;
  int last_target = -1;
  while (!ready.empty()) {
    int pick = *ready.begin();
    for (int n : ready) {
      if (target[static_cast<size_t>(n)] == last_target) {
        pick = n;
        break;
      }
    }
    ready.erase(pick);
    order.push_back(pick);
    last_target = target[static_cast<size_t>(pick)];
    std::set<int> released;
    for (ValueId out : graph.nodes[static_cast<size_t>(pick)].outputs) {
      if (out == kNoValue) continue;
      for (int c : consumers[static_cast<size_t>(out)]) released.insert(c);
    }
    for (int c : released) {
      if (--pending[static_cast<size_t>(c)] == 0) ready.insert(c);
    }
  }
  if (order.size() != num_nodes) throw Error("form_regions: the graph has a cycle");

  // Runs of the same target in that order, each split into its connected components. A path
  // between two components of one run would have to pass through a node inside the run, so
  // the regions stay acyclic in this order.
  std::vector<std::vector<int>> regions;
  size_t begin = 0;
  while (begin < order.size()) {
    size_t end = begin;
    const int t = target[static_cast<size_t>(order[begin])];
    while (end < order.size() && target[static_cast<size_t>(order[end])] == t) ++end;
    const std::vector<int> run(order.begin() + static_cast<std::ptrdiff_t>(begin),
                               order.begin() + static_cast<std::ptrdiff_t>(end));
    std::vector<char> in_run(num_nodes, 0);
    for (int n : run) in_run[static_cast<size_t>(n)] = 1;
    for (auto& component : same_target_components(graph, target, run, in_run)) {
      regions.push_back(std::move(component));
    }
    begin = end;
  }
  return regions;
}

}  // namespace tessera::partition
