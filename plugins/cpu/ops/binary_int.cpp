// Add, Sub, Mul, Div, Min and Max on integer tensors (int8, uint8, int32, int64) with numpy
// broadcasting, as ONNX defines them for integers and core's reference kernels compute them
// (core/ops/util/elementwise.hpp): + - * wrap around (two's complement, as ONNX Runtime does), Div
// truncates toward zero, lowest / -1 wraps to lowest, and a division by zero is an error naming
// the node. int64 and int32 carry the index arithmetic of exported models (attention masks and
// positions from token ids, lengths in a CTC decode), int8/uint8 the raw arithmetic of quantized
// graphs. Min and Max also take one or more inputs (variadic, folded left like core's kernel).
// Shapes are planned once into merged loops (ops/loops.hpp) like the float32 ops; each run is a
// loop with compile-time operand steps, which the compiler vectorises for + - * min max.
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

bool is_int(const tsr_tensor* t) {
  return t != nullptr && (t->dtype == TSR_DTYPE_INT8 || t->dtype == TSR_DTYPE_UINT8 ||
                          t->dtype == TSR_DTYPE_INT32 || t->dtype == TSR_DTYPE_INT64);
}

// Min and Max fold any number of inputs; the arithmetic ops take exactly two.
bool variadic(IntOp op) {
  return op == IntOp::kMin || op == IntOp::kMax;
}

// One element: the arithmetic in unsigned form so overflow wraps (signed overflow is undefined).
// The product is taken in at least `unsigned`, since narrower unsigned operands promote to int.
template <IntOp Op, typename T>
inline T apply(T a, T b) {
  using U = std::make_unsigned_t<T>;
  using W = std::common_type_t<U, unsigned>;
  if constexpr (Op == IntOp::kAdd) return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  if constexpr (Op == IntOp::kSub) return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  if constexpr (Op == IntOp::kMul) {
    return static_cast<T>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b)));
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

// One link of the left fold y = x0 op x1 op x2 ...: lhs is input 0 for the first link and the
// output so far (kSoFar) for the later ones of a variadic Min/Max. Planned at compile time.
constexpr int32_t kSoFar = -2;
struct Link {
  int32_t lhs, rhs;
  BroadcastPlan plan;
};

template <typename T>
Step int_step(IntOp op, std::shared_ptr<const std::vector<Link>> links, int32_t out,
              std::string node) {
  return [=](std::vector<float*>& v) {
    T* y = reinterpret_cast<T*>(v[out]);
    for (const Link& link : *links) {
      const T* a = link.lhs == kSoFar ? y : reinterpret_cast<const T*>(v[link.lhs]);
      const T* b = reinterpret_cast<const T*>(v[link.rhs]);
      const BroadcastPlan& plan = link.plan;
      // Runs of a later link read and write the same output elements, never another run's.
      for_each_run(plan, [&](const int64_t* off, int64_t y_off, int64_t len) {
        const T* rb = b + off[1];
        if (op == IntOp::kDiv && has_zero(rb, plan.step[1], len)) {
          throw plugin::Failure(TSR_INVALID_ARGUMENT, node + ": integer division by zero");
        }
        run_op<T>(op, a + off[0], plan.step[0], rb, plan.step[1], y + y_off, len);
      });
    }
  };
}

}  // namespace

bool is_int_binary(const NodeView& node) {
  return node.num_inputs() > 0 && is_int(node.input(0));
}

std::string query_binary_int(const RegionView& region, const NodeView& node) {
  (void)region;
  IntOp op;
  if (!int_op_of(node.op_type(), &op)) return "integers: only Add, Sub, Mul, Div, Min, Max";
  if (!variadic(op) && node.num_inputs() != 2) return "integers: two inputs only";
  const tsr_tensor* y = node.output(0);
  if (y == nullptr || y->dtype != node.input(0)->dtype) {
    return "integers: inputs and output must share one dtype";
  }
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    const tsr_tensor* x = node.input(i);
    if (x == nullptr || x->dtype != y->dtype) {
      return "integers: inputs and output must share one dtype";
    }
    BroadcastPlan plan;
    const std::string why = plan_broadcast(dims(*y), {dims(*x)}, &plan);
    if (!why.empty()) return why;
  }
  return "";
}

Step build_binary_int(BuildContext& ctx) {
  const NodeView& node = ctx.node;
  IntOp op = IntOp::kAdd;
  int_op_of(node.op_type(), &op);
  const std::vector<int64_t> out_dims = dims(*node.output(0));
  auto links = std::make_shared<std::vector<Link>>();
  // One input (Min/Max of one tensor): min(x, x) == x, broadcast to the output.
  const int32_t count = node.num_inputs();
  for (int32_t i = count == 1 ? 0 : 1; i < count; ++i) {
    Link link{i <= 1 ? node.input_index(0) : kSoFar, node.input_index(i), {}};
    const std::vector<int64_t> lhs = i <= 1 ? dims(*node.input(0)) : out_dims;
    const std::string why = plan_broadcast(out_dims, {lhs, dims(*node.input(i))}, &link.plan);
    if (!why.empty()) throw plugin::Failure(TSR_UNSUPPORTED, node.describe() + ": " + why);
    links->push_back(std::move(link));
  }
  const std::string where = node.describe();
  switch (node.input(0)->dtype) {
    case TSR_DTYPE_INT8:
      return int_step<int8_t>(op, links, ctx.output, where);
    case TSR_DTYPE_UINT8:
      return int_step<uint8_t>(op, links, ctx.output, where);
    case TSR_DTYPE_INT32:
      return int_step<int32_t>(op, links, ctx.output, where);
    default:
      return int_step<int64_t>(op, links, ctx.output, where);
  }
}

}  // namespace tessera::cpu
