// Internal to the session: what a plan holds (Planned, its buffer sets), a graph run in stages
// (Staged), and Session::Impl, shared by session.cpp (construction, plans per signature, runs),
// session_planning.cpp (targets, packs, partition, compile, buffers) and session_stages.cpp.
#pragma once

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

#include "exec/stages.hpp"
#include "partition/partitioner.hpp"
#include "passes/infer_and_fold.hpp"
#include "plugins/pack_apply.hpp"
#include "tessera/error.hpp"
#include "tessera/package.hpp"
#include "tessera/passes.hpp"
#include "tessera/session.hpp"

namespace tessera {

using partition::Target;

namespace session_detail {

// The targets `options` name (every usable plugin when none), resolved on `host`; skips and
// warnings go to `plan`.
std::vector<Target> resolve_targets(const PluginHost& host, const SessionOptions& options,
                                    ExecutionPlan& plan);
// A warning when most of the plan's time runs on the reference plugin (kReferenceShareWarning).
void warn_of_reference_share(const std::vector<Target>& targets, ExecutionPlan& plan);
// Whether a region on `target` copies its boundary values between host and device memory.
bool copies_to_device(const Target& target);

}  // namespace session_detail

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

}  // namespace tessera
