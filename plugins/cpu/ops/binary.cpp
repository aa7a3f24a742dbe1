// Broadcasting arithmetic on float32: Add, Sub, Mul, Div, Min, Max, Pow, PRelu and the variadic
// Sum and Mean (integer operands go to binary_int.cpp). Shapes are planned once (ops/loops.hpp)
// into merged loops and an inner run, so a squeeze-excitation Mul ([N,C,1,1] x [N,C,H,W]) runs
// H*W-long runs against one scale, and a per-channel bias runs like a same-shape Add. A Relu/Clip
// after the op runs in the same pass.
#include <memory>

#include "kernels/elementwise.hpp"
#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

bool binary_op_of(std::string_view op, BinaryOp* out) {
  static const std::pair<const char*, BinaryOp> table[] = {
      {"Add", BinaryOp::kAdd}, {"Sum", BinaryOp::kAdd},   {"Mean", BinaryOp::kAdd},
      {"Sub", BinaryOp::kSub}, {"Mul", BinaryOp::kMul},   {"Div", BinaryOp::kDiv},
      {"Min", BinaryOp::kMin}, {"Max", BinaryOp::kMax},   {"Pow", BinaryOp::kPow},
      {"PRelu", BinaryOp::kPRelu}};
  for (const auto& [name, value] : table) {
    if (op == name) {
      *out = value;
      return true;
    }
  }
  return false;
}

// One broadcast step of the chain: out = acc op in, where acc is the first input or the output
// so far. Planned at compile time.
struct Stage {
  int32_t lhs, rhs;  // value indices; lhs == -2 means the output itself (a later stage)
  BroadcastPlan plan;
};

}  // namespace

std::string query_binary(const RegionView& region, const NodeView& node) {
  BinaryOp op;
  if (!binary_op_of(node.op_type(), &op)) return "not a broadcasting arithmetic op";
  if (is_int_binary(node)) return query_binary_int(region, node);
  const tsr_tensor* y = node.output(0);
  if (!is_f32(y)) return "only float32 is implemented";
  std::vector<std::vector<int64_t>> shapes;
  for (int32_t i = 0; i < node.num_inputs(); ++i) {
    if (!is_f32(node.input(i))) return "only float32 is implemented";
    shapes.push_back(dims(*node.input(i)));
  }
  if (shapes.empty()) return "no inputs";
  BroadcastPlan plan;
  for (const auto& s : shapes) {
    const std::string why = plan_broadcast(dims(*y), {s}, &plan);
    if (!why.empty()) return why;
  }
  return "";
}

bool same_shape_add(const NodeView& node) {
  const tsr_tensor* a = node.input(0);
  const tsr_tensor* b = node.input(1);
  return node.op_type() == "Add" && node.num_inputs() == 2 && is_f32(a) && is_f32(b) &&
         dims(*a) == dims(*b) && dims(*a) == dims(*node.output(0));
}

Step build_binary(BuildContext& ctx) {
  const NodeView& node = ctx.node;
  if (is_int_binary(node)) return build_binary_int(ctx);
  BinaryOp op = BinaryOp::kAdd;
  binary_op_of(node.op_type(), &op);
  const std::vector<int64_t> out_dims = dims(*node.output(0));
  const int64_t n = numel(*node.output(0));
  const int32_t out = ctx.output;
  const Activation act = ctx.act;
  const int32_t count = node.num_inputs();

  // Pow with a constant scalar exponent of 2 or 0.5 is a unary square or root.
  if (op == BinaryOp::kPow && count == 2) {
    const float* e = constant_f32(node.input(1));
    if (e != nullptr && numel(*node.input(1)) == 1 && (e[0] == 2.0f || e[0] == 0.5f) &&
        dims(*node.input(0)) == out_dims) {
      UnaryFn fn;
      fn.op = e[0] == 2.0f ? UnaryOp::kSquare : UnaryOp::kSqrt;
      fn.lo = act.lo;
      fn.hi = act.hi;
      const int32_t in = node.input_index(0);
      return [=](std::vector<float*>& v) { unary_parallel(fn, v[in], v[out], n); };
    }
  }

  auto stages = std::make_shared<std::vector<Stage>>();
  if (count == 1) {
    // Sum/Mean/Min/Max of one input: a copy, broadcast to the output.
    Stage s{node.input_index(0), node.input_index(0), {}};
    plan_broadcast(out_dims, {dims(*node.input(0)), dims(*node.input(0))}, &s.plan);
    stages->push_back(s);
    op = BinaryOp::kMax;  // max(x, x) == x, NaN included
  } else {
    for (int32_t i = 1; i < count; ++i) {
      Stage s{i == 1 ? node.input_index(0) : -2, node.input_index(i), {}};
      const std::vector<int64_t> lhs = i == 1 ? dims(*node.input(0)) : out_dims;
      const std::string why = plan_broadcast(out_dims, {lhs, dims(*node.input(i))}, &s.plan);
      if (!why.empty()) throw plugin::Failure(TSR_UNSUPPORTED, node.describe() + ": " + why);
      stages->push_back(s);
    }
  }
  const bool mean = node.op_type() == "Mean";
  const float inv_count = 1.0f / static_cast<float>(count);
  const float inf = std::numeric_limits<float>::infinity();
  return [=](std::vector<float*>& v) {
    float* y = v[out];
    for (size_t s = 0; s < stages->size(); ++s) {
      const Stage& st = (*stages)[s];
      const bool last = s + 1 == stages->size();
      // The clamp belongs after the whole chain (and after Mean's division).
      const float lo = last && !mean ? act.lo : -inf, hi = last && !mean ? act.hi : inf;
      const float* a = st.lhs == -2 ? y : v[st.lhs];
      const float* b = v[st.rhs];
      for_each_run(st.plan, [&](const int64_t* off, int64_t y_off, int64_t len) {
        binary_run(op, a + off[0], st.plan.step[0], b + off[1], st.plan.step[1], y + y_off, len,
                   lo, hi);
      });
    }
    if (mean) {
      // y * (1 / count) then the clamp: a Mul by a scalar through the same run kernel.
      tbb::parallel_for(int64_t{0}, (n + 4095) / 4096, [&](int64_t c) {
        const int64_t b = c * 4096, len = std::min<int64_t>(4096, n - b);
        binary_run(BinaryOp::kMul, y + b, 1, &inv_count, 0, y + b, len, act.lo, act.hi);
      });
    }
  };
}

}  // namespace tessera::cpu
