// The comparison and logical families with numpy broadcasting, into bool (one byte, 0 or 1):
// Equal, Less, Greater, LessOrEqual, GreaterOrEqual on float32, int32 or int64; And, Or, Xor on
// bool; Not; IsNaN and IsInf on float32 (torch.nan_to_num and isfinite guards). They build the
// masks of exported models whose masks depend on the input (padding masks from token ids,
// thresholds on activations); where the operands are constants core has folded them already. Shapes
// are planned once into merged loops (ops/loops.hpp).
#include <cmath>
#include <memory>

#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

enum class Rel { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual, kAnd, kOr, kXor };

bool rel_of(std::string_view op, Rel* out) {
  static const std::pair<const char*, Rel> table[] = {{"Equal", Rel::kEqual},
                                                      {"Less", Rel::kLess},
                                                      {"Greater", Rel::kGreater},
                                                      {"LessOrEqual", Rel::kLessOrEqual},
                                                      {"GreaterOrEqual", Rel::kGreaterOrEqual},
                                                      {"And", Rel::kAnd},
                                                      {"Or", Rel::kOr},
                                                      {"Xor", Rel::kXor}};
  for (const auto& [name, value] : table) {
    if (op == name) {
      *out = value;
      return true;
    }
  }
  return false;
}

bool logical(Rel r) {
  return r == Rel::kAnd || r == Rel::kOr || r == Rel::kXor;
}

template <typename T>
inline bool apply(Rel r, T a, T b) {
  switch (r) {
    case Rel::kEqual:
      return a == b;
    case Rel::kLess:
      return a < b;
    case Rel::kGreater:
      return a > b;
    case Rel::kLessOrEqual:
      return a <= b;
    case Rel::kGreaterOrEqual:
      return a >= b;
    case Rel::kAnd:
      return a != T{0} && b != T{0};
    case Rel::kOr:
      return a != T{0} || b != T{0};
    case Rel::kXor:
      return (a != T{0}) != (b != T{0});
  }
  return false;
}

template <typename T>
Step compare_step(Rel r, std::shared_ptr<const BroadcastPlan> plan, int32_t ia, int32_t ib,
                  int32_t out) {
  return [=](std::vector<float*>& v) {
    const T* a = reinterpret_cast<const T*>(v[ia]);
    const T* b = reinterpret_cast<const T*>(v[ib]);
    uint8_t* y = reinterpret_cast<uint8_t*>(v[out]);
    const int64_t sa = plan->step[0], sb = plan->step[1];
    for_each_run(*plan, [&](const int64_t* off, int64_t y_off, int64_t len) {
      const T* ra = a + off[0];
      const T* rb = b + off[1];
      uint8_t* ry = y + y_off;
      for (int64_t j = 0; j < len; ++j) ry[j] = apply<T>(r, ra[j * sa], rb[j * sb]) ? 1 : 0;
    });
  };
}

bool comparable(const tsr_tensor* t) {
  return t != nullptr && (t->dtype == TSR_DTYPE_FLOAT32 || t->dtype == TSR_DTYPE_INT32 ||
                          t->dtype == TSR_DTYPE_INT64);
}

}  // namespace

std::string query_compare(const RegionView& region, const NodeView& node) {
  (void)region;
  Rel r;
  if (!rel_of(node.op_type(), &r) || node.num_inputs() != 2) return "two inputs only";
  const tsr_tensor* a = node.input(0);
  const tsr_tensor* b = node.input(1);
  const tsr_tensor* y = node.output(0);
  if (a == nullptr || b == nullptr || y == nullptr || y->dtype != TSR_DTYPE_BOOL) {
    return "the output must be bool";
  }
  if (logical(r) ? (a->dtype != TSR_DTYPE_BOOL || b->dtype != TSR_DTYPE_BOOL)
                 : (!comparable(a) || b->dtype != a->dtype)) {
    return logical(r) ? "inputs must be bool" : "inputs must share float32, int32 or int64";
  }
  BroadcastPlan plan;
  return plan_broadcast(dims(*y), {dims(*a), dims(*b)}, &plan);
}

Step build_compare(BuildContext& ctx) {
  const NodeView& node = ctx.node;
  Rel r = Rel::kEqual;
  rel_of(node.op_type(), &r);
  auto plan = std::make_shared<BroadcastPlan>();
  plan_broadcast(dims(*node.output(0)), {dims(*node.input(0)), dims(*node.input(1))}, plan.get());
  const int32_t ia = node.input_index(0), ib = node.input_index(1);
  switch (node.input(0)->dtype) {
    case TSR_DTYPE_FLOAT32:
      return compare_step<float>(r, plan, ia, ib, ctx.output);
    case TSR_DTYPE_INT32:
      return compare_step<int32_t>(r, plan, ia, ib, ctx.output);
    case TSR_DTYPE_INT64:
      return compare_step<int64_t>(r, plan, ia, ib, ctx.output);
    default:
      return compare_step<uint8_t>(r, plan, ia, ib, ctx.output);  // bool
  }
}

std::string query_not(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* y = node.output(0);
  if (x == nullptr || y == nullptr || x->dtype != TSR_DTYPE_BOOL || y->dtype != TSR_DTYPE_BOOL) {
    return "input and output must be bool";
  }
  return "";
}

Step build_not(BuildContext& ctx) {
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  const int64_t n = numel(*ctx.node.output(0));
  return [=](std::vector<float*>& v) {
    const uint8_t* x = reinterpret_cast<const uint8_t*>(v[in]);
    uint8_t* y = reinterpret_cast<uint8_t*>(v[out]);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] != 0 ? 0 : 1;
  };
}

std::string query_is_nan_inf(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* y = node.output(0);
  if (!is_f32(x) || y == nullptr || y->dtype != TSR_DTYPE_BOOL) {
    return "only float32 in, bool out is implemented";
  }
  return "";
}

Step build_is_nan_inf(BuildContext& ctx) {
  const bool nan = ctx.node.op_type() == "IsNaN";
  const bool positive = ctx.node.attr_int("detect_positive", 1) != 0;
  const bool negative = ctx.node.attr_int("detect_negative", 1) != 0;
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  const int64_t n = numel(*ctx.node.output(0));
  return [=](std::vector<float*>& v) {
    const float* x = v[in];
    uint8_t* y = reinterpret_cast<uint8_t*>(v[out]);
    if (nan) {
      for (int64_t i = 0; i < n; ++i) y[i] = std::isnan(x[i]) ? 1 : 0;
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      y[i] = std::isinf(x[i]) && (x[i] > 0 ? positive : negative) ? 1 : 0;
    }
  };
}

}  // namespace tessera::cpu
