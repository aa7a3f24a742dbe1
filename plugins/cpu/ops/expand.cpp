// Expand: the input broadcast to the output shape, as runs of copies or fills (ops/loops.hpp).
#include <algorithm>
#include <cstring>

#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {

std::string query_expand(const RegionView& region, const NodeView& node) {
  (void)region;
  if (!is_f32(node.input(0)) || !is_f32(node.output(0))) return "only float32 is implemented";
  BroadcastPlan plan;
  return plan_broadcast(dims(*node.output(0)), {dims(*node.input(0))}, &plan);
}

Step build_expand(BuildContext& ctx) {
  BroadcastPlan plan;
  plan_broadcast(dims(*ctx.node.output(0)), {dims(*ctx.node.input(0))}, &plan);
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  return [=](std::vector<float*>& v) {
    const float* x = v[in];
    float* y = v[out];
    for_each_run(plan, [&](const int64_t* off, int64_t y_off, int64_t len) {
      if (plan.step[0] == 1) {
        std::memcpy(y + y_off, x + off[0], static_cast<size_t>(len) * sizeof(float));
      } else {
        std::fill(y + y_off, y + y_off + len, x[off[0]]);
      }
    });
  };
}

}  // namespace tessera::cpu
