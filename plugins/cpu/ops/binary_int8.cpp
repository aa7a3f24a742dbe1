// Add, Sub, Mul, Div, Min and Max on int8 and uint8 tensors with numpy broadcasting, as ONNX
// defines them for integers: + - * wrap around (two's complement, as core's kernels and ONNX
// Runtime compute them), Div truncates toward zero and a division by zero is an error naming the
// node. Shapes are planned once into merged loops (ops/loops.hpp) like the float32 ops; each run
// is a loop with compile-time operand steps, which the compiler vectorises for + - * min max.
#include <algorithm>
#include <limits>
#include <memory>
#include <type_traits>

#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

enum class IntOp { kAdd, kSub, kMul, kDiv, kMin, kMax };

bool int_op_of(std::string_view op, IntOp* out) {
  static const std::pair<const char*, IntOp> table[] = {
      {"Add", IntOp::kAdd}, {"Sub", IntOp::kSub}, {"Mul", IntOp::kMul},
      {"Div", IntOp::kDiv}, {"Min", IntOp::kMin}, {"Max", IntOp::kMax}};
  for (const auto& [name, value] : table) {
    if (op == name) {
      *out = value;
      return true;
    }
  }
  return false;
}

bool is_int8(const tsr_tensor* t) {
  return t != nullptr && (t->dtype == TSR_DTYPE_INT8 || t->dtype == TSR_DTYPE_UINT8);
}

// One element: the arithmetic in unsigned form so overflow wraps (signed overflow is undefined).
template <IntOp Op, typename T>
inline T apply(T a, T b) {
  using U = std::make_unsigned_t<T>;
  if constexpr (Op == IntOp::kAdd) return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  if constexpr (Op == IntOp::kSub) return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  if constexpr (Op == IntOp::kMul) {
    return static_cast<T>(static_cast<uint32_t>(static_cast<U>(a)) *
                          static_cast<uint32_t>(static_cast<U>(b)));
  }
  if constexpr (Op == IntOp::kMin) return std::min(a, b);
  if constexpr (Op == IntOp::kMax) return std::max(a, b);
  if constexpr (Op == IntOp::kDiv) {
    // lowest / -1 overflows: wrap to lowest, the two's-complement result (core does the same).
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return static_cast<T>(static_cast<U>(0) - static_cast<U>(a));
    }
    return static_cast<T>(a / b);
  }
  return a;
}

// y[j] = a[j * SA] op b[j * SB]: the steps are template arguments so each case vectorises.
template <IntOp Op, typename T, int SA, int SB>
void run(const T* a, const T* b, T* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] = apply<Op, T>(a[j * SA], b[j * SB]);
}

template <IntOp Op, typename T>
void run_steps(const T* a, int64_t sa, const T* b, int64_t sb, T* y, int64_t n) {
  if (sa == 1 && sb == 1) {
    run<Op, T, 1, 1>(a, b, y, n);
  } else if (sa == 1) {
    run<Op, T, 1, 0>(a, b, y, n);
  } else if (sb == 1) {
    run<Op, T, 0, 1>(a, b, y, n);
  } else {
    run<Op, T, 0, 0>(a, b, y, n);
  }
}

template <typename T>
void run_op(IntOp op, const T* a, int64_t sa, const T* b, int64_t sb, T* y, int64_t n) {
  switch (op) {
    case IntOp::kAdd: return run_steps<IntOp::kAdd, T>(a, sa, b, sb, y, n);
    case IntOp::kSub: return run_steps<IntOp::kSub, T>(a, sa, b, sb, y, n);
    case IntOp::kMul: return run_steps<IntOp::kMul, T>(a, sa, b, sb, y, n);
    case IntOp::kDiv: return run_steps<IntOp::kDiv, T>(a, sa, b, sb, y, n);
    case IntOp::kMin: return run_steps<IntOp::kMin, T>(a, sa, b, sb, y, n);
    case IntOp::kMax: return run_steps<IntOp::kMax, T>(a, sa, b, sb, y, n);
  }
}

template <typename T>
bool has_zero(const T* b, int64_t sb, int64_t n) {
  const int64_t count = sb == 0 ? std::min<int64_t>(n, 1) : n;
  for (int64_t j = 0; j < count; ++j) {
    if (b[j] == 0) return true;
  }
  return false;
}

template <typename T>
Step int8_step(IntOp op, std::shared_ptr<const BroadcastPlan> plan, int32_t ia, int32_t ib,
               int32_t out, std::string node) {
  return [=](std::vector<float*>& v) {
    const T* a = reinterpret_cast<const T*>(v[ia]);
    const T* b = reinterpret_cast<const T*>(v[ib]);
    T* y = reinterpret_cast<T*>(v[out]);
    for_each_run(*plan, [&](const int64_t* off, int64_t y_off, int64_t len) {
      const T* rb = b + off[1];
      if (op == IntOp::kDiv && has_zero(rb, plan->step[1], len)) {
        throw plugin::Failure(TSR_INVALID_ARGUMENT, node + ": integer division by zero");
      }
      run_op<T>(op, a + off[0], plan->step[0], rb, plan->step[1], y + y_off, len);
    });
  };
}

}  // namespace

bool is_int8_binary(const NodeView& node) {
  return node.num_inputs() > 0 && is_int8(node.input(0));
}

std::string query_binary_int8(const RegionView& region, const NodeView& node) {
  (void)region;
  IntOp op;
  if (!int_op_of(node.op_type(), &op)) return "int8/uint8: only Add, Sub, Mul, Div, Min, Max";
  if (node.num_inputs() != 2) return "int8/uint8: two inputs only";
  const tsr_tensor* a = node.input(0);
  const tsr_tensor* b = node.input(1);
  const tsr_tensor* y = node.output(0);
  if (b == nullptr || b->dtype != a->dtype || y->dtype != a->dtype) {
    return "int8/uint8: inputs and output must share one dtype";
  }
  BroadcastPlan plan;
  return plan_broadcast(dims(*y), {dims(*a), dims(*b)}, &plan);
}

Step build_binary_int8(BuildContext& ctx) {
  const NodeView& node = ctx.node;
  IntOp op = IntOp::kAdd;
  int_op_of(node.op_type(), &op);
  auto plan = std::make_shared<BroadcastPlan>();
  plan_broadcast(dims(*node.output(0)), {dims(*node.input(0)), dims(*node.input(1))}, plan.get());
  const int32_t ia = node.input_index(0), ib = node.input_index(1);
  if (node.input(0)->dtype == TSR_DTYPE_INT8) {
    return int8_step<int8_t>(op, plan, ia, ib, ctx.output, node.describe());
  }
  return int8_step<uint8_t>(op, plan, ia, ib, ctx.output, node.describe());
}

}  // namespace tessera::cpu
