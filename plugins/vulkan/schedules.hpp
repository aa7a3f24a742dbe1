// The vulkan schedules and their knob spaces, described once: compile reads them (through a
// node's config or the heuristic), describe() hands them to packs and the tuner.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/plugin.hpp"

namespace tessera::vulkan {

struct KnobDesc {
  const char* name;
  std::vector<int64_t> values;
};

struct ScheduleDesc {
  const char* name;    // e.g. "conv2d.gemm"
  const char* shader;  // shaders/<shader>.comp
  std::vector<KnobDesc> knobs;
};

const std::vector<ScheduleDesc>& schedules();
// The schedule a node of `op_type` runs with, or nullptr when it has nothing to tune.
const ScheduleDesc* schedule_for(const std::string& op_type, bool depthwise);

// The output tile (32 or 64) of a tiled GEMM kernel computing an m x n result: the node's config
// when it names the schedule and a valid tile, else the heuristic (64 when both sides fill it).
int32_t gemm_tile(const plugin::NodeConfig* config, const char* schedule, int64_t m, int64_t n);

}  // namespace tessera::vulkan
