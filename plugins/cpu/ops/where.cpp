// Where(condition, X, Y) with numpy broadcasting of all three: a bool condition choosing between
// float32, int32 or int64 values (masked attention scores, masked fills).
#include <memory>

#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

template <typename T>
Step where_step(std::shared_ptr<const BroadcastPlan> plan, int32_t ic, int32_t ix, int32_t iy,
                int32_t out) {
  return [=](std::vector<float*>& v) {
    const uint8_t* c = reinterpret_cast<const uint8_t*>(v[ic]);
    const T* x = reinterpret_cast<const T*>(v[ix]);
    const T* y = reinterpret_cast<const T*>(v[iy]);
    T* z = reinterpret_cast<T*>(v[out]);
    const int64_t sc = plan->step[0], sx = plan->step[1], sy = plan->step[2];
    for_each_run(*plan, [&](const int64_t* off, int64_t z_off, int64_t len) {
      const uint8_t* rc = c + off[0];
      const T* rx = x + off[1];
      const T* ry = y + off[2];
      T* rz = z + z_off;
      for (int64_t j = 0; j < len; ++j) rz[j] = rc[j * sc] != 0 ? rx[j * sx] : ry[j * sy];
    });
  };
}

}  // namespace

std::string query_where(const RegionView& region, const NodeView& node) {
  (void)region;
  if (node.num_inputs() != 3) return "three inputs";
  const tsr_tensor* c = node.input(0);
  const tsr_tensor* x = node.input(1);
  const tsr_tensor* y = node.input(2);
  const tsr_tensor* z = node.output(0);
  if (c == nullptr || x == nullptr || y == nullptr || z == nullptr) return "three inputs";
  if (c->dtype != TSR_DTYPE_BOOL) return "the condition must be bool";
  const bool values =
      z->dtype == TSR_DTYPE_FLOAT32 || z->dtype == TSR_DTYPE_INT32 || z->dtype == TSR_DTYPE_INT64;
  if (!values || x->dtype != z->dtype || y->dtype != z->dtype) {
    return "X, Y and the output must share float32, int32 or int64";
  }
  BroadcastPlan plan;
  return plan_broadcast(dims(*z), {dims(*c), dims(*x), dims(*y)}, &plan);
}

Step build_where(BuildContext& ctx) {
  const NodeView& node = ctx.node;
  auto plan = std::make_shared<BroadcastPlan>();
  plan_broadcast(dims(*node.output(0)),
                 {dims(*node.input(0)), dims(*node.input(1)), dims(*node.input(2))}, plan.get());
  const int32_t ic = node.input_index(0), ix = node.input_index(1), iy = node.input_index(2);
  switch (node.output(0)->dtype) {
    case TSR_DTYPE_INT32:
      return where_step<int32_t>(plan, ic, ix, iy, ctx.output);
    case TSR_DTYPE_INT64:
      return where_step<int64_t>(plan, ic, ix, iy, ctx.output);
    default:
      return where_step<float>(plan, ic, ix, iy, ctx.output);
  }
}

}  // namespace tessera::cpu
