// A compiled region of the cpu plugin: the steps of its (fused) nodes, owned scratch buffers and
// the TBB arena that bounds its threads.
#pragma once

#include <tbb/task_arena.h>

#include <memory>
#include <string>
#include <vector>

#include "denormals.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {

struct Fusion;

class CpuRegion : public plugin::CompiledRegion {
 public:
  // Throws plugin::Failure(TSR_UNSUPPORTED / TSR_COMPILE_FAILED) naming the node when it cannot
  // compile a node, and Failure(TSR_INVALID_ARGUMENT) for a num_threads outside 0..1024.
  // node_configs (by region node index) override the heuristic where they fit the node; the others
  // fall back to it with a note.
  CpuRegion(const RegionView& region, int32_t num_threads,
            const std::vector<plugin::NodeConfig>& node_configs = {});
  void execute(const void* const* inputs, void* const* outputs) override;
  // Per-node times of the last execute; a fused node's time is on the node that absorbed it.
  std::vector<double> last_profile() override { return profile_; }
  // What compile decided (fusions, schedules), one line each; for tests and messages.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  // Compile, in the constructor's order: the arena, core's buffers (region inputs and outputs;
  // returns which values they are), one step per kept node of the fusion plan (returns the
  // values each step touches), then every other value's buffer.
  void start_arena(int32_t threads);
  std::vector<bool> bind_io(const RegionView& region);
  std::vector<std::vector<int32_t>> build_steps(const RegionView& region, int32_t threads,
                                                const std::vector<plugin::NodeConfig>& configs,
                                                const std::vector<bool>& external,
                                                std::vector<int32_t>* aliases);
  std::vector<int32_t> build_step(const Fusion& fusion, const OpEntry& entry, BuildContext& ctx);
  void place_values(const RegionView& region, const std::vector<std::vector<int32_t>>& step_values,
                    const std::vector<bool>& external, const std::vector<int32_t>& aliases);

  std::unique_ptr<tbb::task_arena> arena_;
  std::vector<float*> values_;  // per value: constant or owned scratch pointer
  std::vector<float> memory_;   // intermediates, placed by liveness (place_values)
  std::vector<Step> steps_;
  std::vector<int32_t> step_node_;  // node index of each step
  std::vector<double> profile_;     // microseconds per node
  std::vector<View> views_;         // applied in reverse order at the start of each run
  std::vector<int32_t> inputs_, outputs_;
  std::vector<size_t> output_bytes_;
  std::vector<std::string> notes_;
};

// Physical cores of the host (distinct core ids per package), capped by the CPUs this process
// may run on; at least 1.
int32_t physical_cores();

}  // namespace tessera::cpu
