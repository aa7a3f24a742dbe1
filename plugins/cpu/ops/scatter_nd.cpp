// ScatterND (float32, reduction none) with constant indices: the output is a copy of data with
// whole slices replaced by rows of updates, the slice offsets worked out at compile time. mvitv2
// writes its relative-position terms into the attention scores this way.
#include <cstring>
#include <memory>

#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

struct ScatterPlan {
  std::vector<int64_t> offsets;  // per update row: its slice's first element in the output
  int64_t slice = 1;             // elements per slice
  int64_t total = 0;             // elements of data
};

// Fills `plan` and returns "", or says why the node is not taken.
std::string scatter_plan(const NodeView& node, ScatterPlan* plan) {
  const tsr_tensor* data = node.input(0);
  const tsr_tensor* indices = node.input(1);
  const tsr_tensor* updates = node.input(2);
  if (!is_f32(data) || !is_f32(updates) || !is_f32(node.output(0))) {
    return "only float32 is implemented";
  }
  if (node.attr_string("reduction", "none") != "none")
    return "only reduction 'none' is implemented";
  std::vector<int64_t> idx;
  if (indices == nullptr || indices->rank < 1 || !constant_ints(indices, &idx)) {
    return "indices must be an integer constant";
  }
  const int64_t k = indices->dims[indices->rank - 1];
  if (k < 1 || k > data->rank) return "the last axis of indices must be in [1, rank of data]";
  plan->slice = 1;
  for (int32_t d = static_cast<int32_t>(k); d < data->rank; ++d) plan->slice *= data->dims[d];
  plan->total = numel(*data);
  const int64_t rows = static_cast<int64_t>(idx.size()) / k;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t dim = data->dims[j];
      int64_t v = idx[static_cast<size_t>(r * k + j)];
      if (v < -dim || v >= dim) return "an index is out of range (the reference kernel names it)";
      if (v < 0) v += dim;
      offset = offset * dim + v;
    }
    plan->offsets.push_back(offset * plan->slice);
  }
  return "";
}

}  // namespace

std::string query_scatter_nd(const RegionView& region, const NodeView& node) {
  (void)region;
  ScatterPlan plan;
  return scatter_plan(node, &plan);
}

Step build_scatter_nd(BuildContext& ctx) {
  auto plan = std::make_shared<ScatterPlan>();
  scatter_plan(ctx.node, plan.get());
  const int32_t data = ctx.node.input_index(0), updates = ctx.node.input_index(2);
  const int32_t out = ctx.output;
  return [=](std::vector<float*>& v) {
    const size_t bytes = static_cast<size_t>(plan->slice) * sizeof(float);
    if (v[out] != v[data]) {
      std::memcpy(v[out], v[data], static_cast<size_t>(plan->total) * sizeof(float));
    }
    for (size_t r = 0; r < plan->offsets.size(); ++r) {
      std::memcpy(v[out] + plan->offsets[r], v[updates] + static_cast<int64_t>(r) * plan->slice,
                  bytes);
    }
  };
}

}  // namespace tessera::cpu
