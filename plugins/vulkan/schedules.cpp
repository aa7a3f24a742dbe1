// Knob spaces of the vulkan schedules and their heuristics.
#include "schedules.hpp"

namespace tessera::vulkan {

const std::vector<ScheduleDesc>& schedules() {
  // tile: the side of the output block a 16 x 16 work-group computes (tile/16 squared outputs per
  // invocation); 64 amortises the shared-memory loads best, 32 leaves fewer idle lanes on small
  // layers.
  static const std::vector<ScheduleDesc> all = {
      {"conv2d.gemm", "conv2d_gemm", {{"tile", {32, 64}}}},
      {"matmul.tiled", "matmul", {{"tile", {32, 64}}}},
  };
  return all;
}

const ScheduleDesc* schedule_for(const std::string& op_type, bool depthwise) {
  if (op_type == "Conv" && !depthwise) return &schedules()[0];
  if (op_type == "MatMul" || op_type == "Gemm") return &schedules()[1];
  return nullptr;
}

int32_t gemm_tile(const plugin::NodeConfig* config, const char* schedule, int64_t m, int64_t n) {
  if (config != nullptr && config->schedule == schedule) {
    const int64_t tile = config->knob("tile", 0);
    if (tile == 32 || tile == 64) return static_cast<int32_t>(tile);
  }
  return m >= 48 && n >= 48 ? 64 : 32;
}

}  // namespace tessera::vulkan
