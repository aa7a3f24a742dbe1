// ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceL1, ReduceL2, ReduceSumSquare,
// ReduceLogSumExp, ReduceProd and ReduceLogSum. Axes that are contiguous once extent-1 dims are
// dropped (the spatial axes of a timm squeeze-excitation mean, the last axis of a decomposed
// LayerNorm) make the input [outer, reduced, inner]: inner == 1 reduces contiguous runs,
// otherwise rows of `inner` values are combined row by row, so every read is unit-stride. Other
// axes (a mean over the batch and the width) are first gathered by a strided copy with the kept
// axes first and the reduced ones last.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <set>

#include "kernels/kernels.hpp"
#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

bool reduce_op_of(std::string_view op, ReduceOp* out) {
  static const std::pair<const char*, ReduceOp> table[] = {
      {"ReduceMean", ReduceOp::kMean},
      {"ReduceSum", ReduceOp::kSum},
      {"ReduceMax", ReduceOp::kMax},
      {"ReduceMin", ReduceOp::kMin},
      {"ReduceL1", ReduceOp::kL1},
      {"ReduceL2", ReduceOp::kL2},
      {"ReduceSumSquare", ReduceOp::kSumSquare},
      {"ReduceLogSumExp", ReduceOp::kLogSumExp},
      {"ReduceProd", ReduceOp::kProd},
      {"ReduceLogSum", ReduceOp::kLogSum}};
  for (const auto& [name, value] : table) {
    if (op == name) {
      *out = value;
      return true;
    }
  }
  return false;
}

struct ReduceShape {
  int64_t outer = 1, reduced = 1, inner = 1;
  // Reduced axes that are not adjacent (a mean over axes 0 and 2): the input is first copied
  // with its kept axes first and its reduced axes last, then reduced as contiguous runs.
  bool gather = false;
  CopyPlan plan;
};

// "" and the [outer, reduced, inner] split, or why the node is outside what the step does.
std::string reduce_shape(const NodeView& node, ReduceShape* shape) {
  const tsr_tensor* x = node.input(0);
  const int64_t rank = x->rank;
  std::vector<int64_t> axes;
  bool axes_given = false;
  if (node.num_inputs() > 1 && node.input_index(1) >= 0) {
    const tsr_tensor* a = node.input(1);
    if (a->data == nullptr || a->dtype != TSR_DTYPE_INT64) return "axes must be an int64 constant";
    const int64_t* v = static_cast<const int64_t*>(a->data);
    axes.assign(v, v + numel(*a));
    axes_given = true;
  } else if (node.has_attribute("axes")) {
    axes = node.attr_ints("axes", {});
    axes_given = true;
  }
  std::set<int64_t> reduce;
  if (!axes_given || axes.empty()) {
    if (axes_given && node.attr_int("noop_with_empty_axes", 0) != 0) {
      return "noop_with_empty_axes with empty axes is not implemented";
    }
    for (int64_t d = 0; d < rank; ++d) reduce.insert(d);
  } else {
    for (int64_t a : axes) {
      const int64_t d = normalize_axis(a, rank);
      if (d < 0) return "axis " + std::to_string(a) + " out of range";
      reduce.insert(d);
    }
  }
  // Split at the reduced block; extent-1 dims may sit anywhere.
  int64_t first = -1, last = -1;
  for (int64_t d = 0; d < rank; ++d) {
    if (x->dims[d] == 1 || reduce.count(d) == 0) continue;
    if (first < 0) first = d;
    last = d;
  }
  ReduceShape s;
  bool adjacent = true;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t e = x->dims[d];
    if (e == 1) continue;
    if (reduce.count(d) != 0) {
      s.reduced *= e;
    } else if (first < 0 || d < first) {
      s.outer *= e;
    } else if (d > last) {
      s.inner *= e;
    } else {
      adjacent = false;
    }
  }
  if (!adjacent) {
    const std::vector<int64_t> in_dims = dims(*x), strides = row_major_strides(in_dims);
    std::vector<int64_t> order_dims, order_strides;
    s = ReduceShape{};
    for (const bool reduced : {false, true}) {
      for (int64_t d = 0; d < rank; ++d) {
        if ((reduce.count(d) != 0) != reduced || in_dims[static_cast<size_t>(d)] == 1) continue;
        order_dims.push_back(in_dims[static_cast<size_t>(d)]);
        order_strides.push_back(strides[static_cast<size_t>(d)]);
        (reduced ? s.reduced : s.outer) *= in_dims[static_cast<size_t>(d)];
      }
    }
    s.gather = true;
    s.plan = merge_copy_plan(order_dims, order_strides, 0);
  }
  *shape = s;
  return "";
}

}  // namespace

std::string query_reduce(const RegionView& region, const NodeView& node) {
  (void)region;
  ReduceOp op;
  if (!reduce_op_of(node.op_type(), &op)) return "not a reduction";
  if (!is_f32(node.input(0)) || !is_f32(node.output(0))) return "only float32 is implemented";
  ReduceShape s;
  const std::string why = reduce_shape(node, &s);
  if (!why.empty()) return why;
  if (s.reduced == 0) return "empty reductions are not implemented";
  if (op == ReduceOp::kLogSumExp && s.inner != 1) {
    return "ReduceLogSumExp over non-trailing axes is not implemented";
  }
  return "";
}

Step build_reduce(BuildContext& ctx) {
  ReduceOp op = ReduceOp::kSum;
  reduce_op_of(ctx.node.op_type(), &op);
  ReduceShape s;
  reduce_shape(ctx.node, &s);
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  const Activation act = ctx.act;
  return [=](std::vector<float*>& v) {
    const float* x = v[in];
    float* y = v[out];
    if (s.gather) {
      // The calling thread's buffer, kept across runs (a concurrent run calls from its own
      // thread; the tasks below only read it).
      float* gathered = thread_scratch<struct ReduceGatherScratch>(s.outer * s.reduced);
      strided_copy(s.plan, x, gathered);
      x = gathered;
    }
    if (s.inner == 1) {
      tbb::parallel_for(int64_t{0}, s.outer, [&](int64_t o) {
        y[o] = std::min(std::max(reduce_run(op, x + o * s.reduced, s.reduced), act.lo), act.hi);
      });
      return;
    }
    // Column blocks of 1K values per task keep the accumulator row in L1.
    constexpr int64_t kBlock = 1024;
    const int64_t blocks = (s.inner + kBlock - 1) / kBlock;
    tbb::parallel_for(int64_t{0}, s.outer * blocks, [&](int64_t item) {
      const int64_t o = item / blocks, j0 = (item % blocks) * kBlock;
      const int64_t len = std::min(kBlock, s.inner - j0);
      const float* src = x + o * s.reduced * s.inner + j0;
      float* acc = y + o * s.inner + j0;
      for (int64_t r = 0; r < s.reduced; ++r) reduce_rows(op, src + r * s.inner, acc, len, r == 0);
      reduce_finish(op, acc, len, s.reduced);
      for (int64_t j = 0; j < len; ++j) acc[j] = std::min(std::max(acc[j], act.lo), act.hi);
    });
  };
}

}  // namespace tessera::cpu
