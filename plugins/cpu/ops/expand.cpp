// Expand: the input broadcast to the output shape, as runs of copies or fills (ops/loops.hpp), for
// any element type (bool masks and int64 ids as well as float32).
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {

std::string query_expand(const RegionView& region, const NodeView& node) {
  (void)region;
  if (copy_element_bytes(node.input(0), node.output(0)) == 0) {
    return "input and output dtypes differ";
  }
  BroadcastPlan plan;
  return plan_broadcast(dims(*node.output(0)), {dims(*node.input(0))}, &plan);
}

namespace {

// The broadcast copy with elements of type T (a 1-, 2-, 4- or 8-byte bit pattern).
template <typename T>
void expand_runs(const BroadcastPlan& plan, const T* x, T* y) {
  for_each_run(plan, [&](const int64_t* off, int64_t y_off, int64_t len) {
    if (plan.step[0] == 1) {
      std::memcpy(y + y_off, x + off[0], static_cast<size_t>(len) * sizeof(T));
    } else {
      std::fill(y + y_off, y + y_off + len, x[off[0]]);
    }
  });
}

}  // namespace

Step build_expand(BuildContext& ctx) {
  BroadcastPlan plan;
  plan_broadcast(dims(*ctx.node.output(0)), {dims(*ctx.node.input(0))}, &plan);
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  const int64_t bytes = copy_element_bytes(ctx.node.input(0), ctx.node.output(0));
  return [=](std::vector<float*>& v) {
    const void* x = v[in];
    void* y = v[out];
    switch (bytes) {
      case 1:
        return expand_runs(plan, static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y));
      case 2:
        return expand_runs(plan, static_cast<const uint16_t*>(x), static_cast<uint16_t*>(y));
      case 8:
        return expand_runs(plan, static_cast<const uint64_t*>(x), static_cast<uint64_t*>(y));
      default:
        return expand_runs(plan, static_cast<const float*>(x), static_cast<float*>(y));
    }
  };
}

}  // namespace tessera::cpu
