// The partitioner: per-node capability answers from the targets -> node assignment (priority,
// then island merge-back by boundary transfer cost) -> connected, acyclic regions.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "partition/cost_model.hpp"
#include "tessera/graph.hpp"
#include "tessera/plugin_host.hpp"

namespace tessera::partition {

// One resolved entry of the priority list.
struct Target {
  std::shared_ptr<PluginInstance> plugin;  // this target's own instance
  std::string spec;                        // as the user wrote it: "mali:any"
  std::string device;                      // the device's id
  PluginDeviceInfo info;
  // The device's memory domain (ABI 2.1 buffer_kind); "" = host memory only. Regions of targets
  // of one domain hand values over in its buffers.
  std::string domain;
  // From the device's family descriptor; unknown: the plugin's own estimates are used.
  Throughput throughput;
  // Device works on host memory directly: region boundaries cost it no transfer.
  bool host_memory() const { return info.kind == "cpu"; }
  // The reference plugin: the oracle's naive loops, a last resort. Island merge-back by estimate
  // never moves nodes onto it: a node lands there only when no target before it in the user's
  // order can run it, when the user put it first, or by the deployment's min_island_nodes.
  bool last_resort() const { return plugin != nullptr && plugin->name() == "reference"; }
};

struct NodeAnswer {
  bool supported = false;
  // The estimate from the node's work and the device's throughput (cost_model.hpp) where the
  // device's family gives throughput figures, else the plugin's own estimate.
  double cost_us = 0.0;
  std::string estimate;  // how cost_us was reached, for `tessera plan`
  std::string reason;
};

// For devices whose family gives no throughput: a host<->device copy at this bandwidth plus a
// fixed launch overhead per region.
constexpr double kTransferBytesPerUs = 5000.0;  // 5 GB/s
constexpr double kLaunchOverheadUs = 10.0;

// answers[node][target]: asks every target about every node (one-node region views).
std::vector<std::vector<NodeAnswer>> query_nodes(const Graph& graph,
                                                 const std::vector<Target>& targets);

struct Assignment {
  std::vector<int> target;          // per node, index into targets
  std::vector<std::string> reason;  // per node, human-readable
};

// (node, target) pairs ruled out, e.g. after a failed compile, with the reason to show.
struct Exclusion {
  int node;
  int target;
  std::string reason;
};

// First supported target in priority order per node, then islands that lose to boundary transfer
// costs move to a neighbouring target that supports all their nodes. Islands of fewer than
// `min_island_nodes` nodes (the deployment's partition.min_island_nodes) move to the cheapest such
// neighbour even when they would win. Throws Error naming a node no target can run.
Assignment assign_nodes(const Graph& graph, const std::vector<Target>& targets,
                        const std::vector<std::vector<NodeAnswer>>& answers,
                        const std::vector<Exclusion>& excluded, int min_island_nodes = 1);

// Groups nodes into regions: each a connected set of nodes on one target; the regions, run in
// the returned order, respect every data dependency (no region depends on itself through
// another). Node lists are in execution order.
std::vector<std::vector<int>> form_regions(const Graph& graph, const std::vector<int>& target);

}  // namespace tessera::partition
