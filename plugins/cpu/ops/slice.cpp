// Slice (opset 10+: starts, ends, axes, steps as constant inputs; opset 1-9: attributes) as one
// strided copy of the input.
#include <algorithm>
#include <limits>

#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

// The copy plan of the slice, or why it cannot be planned.
std::string slice_plan(const RegionView& region, const NodeView& node, CopyPlan* plan) {
  const tsr_tensor* x = node.input(0);
  const int64_t rank = x->rank;
  std::vector<int64_t> starts, ends, axes, steps;
  if (region.opset() < 10) {
    starts = node.attr_ints("starts", {});
    ends = node.attr_ints("ends", {});
    axes = node.attr_ints("axes", {});
  } else {
    if (!constant_ints(node.input(1), &starts) || !constant_ints(node.input(2), &ends)) {
      return "starts and ends must be constants";
    }
    if (node.input_index(3) >= 0 && !constant_ints(node.input(3), &axes)) {
      return "axes must be a constant";
    }
    if (node.input_index(4) >= 0 && !constant_ints(node.input(4), &steps)) {
      return "steps must be a constant";
    }
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return "starts, ends, axes and steps must have the same length";
  const std::vector<int64_t> in_dims = dims(*x);
  const std::vector<int64_t> in_strides = row_major_strides(in_dims);
  std::vector<int64_t> begin(static_cast<size_t>(rank), 0), step(static_cast<size_t>(rank), 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = normalize_axis(axes[i], rank);
    if (a < 0) return "axis " + std::to_string(axes[i]) + " out of range";
    if (steps[i] == 0) return "a step of 0";
    const int64_t e = in_dims[static_cast<size_t>(a)];
    int64_t s = starts[i];
    // Clamp as the spec says: within [0, e] for positive steps, [-1, e - 1] for negative ones.
    if (s < 0) s = s < -e ? 0 : s + e;
    s = steps[i] > 0 ? std::min(s, e) : std::min(s, e - 1);
    begin[static_cast<size_t>(a)] = s;
    step[static_cast<size_t>(a)] = steps[i];
  }
  const std::vector<int64_t> out_dims = dims(*node.output(0));
  int64_t offset = 0;
  std::vector<int64_t> strides(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) {
    const size_t u = static_cast<size_t>(d);
    if (out_dims[u] > 0) offset += begin[u] * in_strides[u];
    // An axis the output keeps one element of never steps, and its step may be as large as
    // INT64_MIN (ONNX Runtime returns that one element): its stride is not computed.
    strides[u] = out_dims[u] > 1 ? step[u] * in_strides[u] : 0;
  }
  *plan = merge_copy_plan(out_dims, strides, offset);
  return "";
}

}  // namespace

std::string query_slice(const RegionView& region, const NodeView& node) {
  if (copy_element_bytes(node.input(0), node.output(0)) == 0)
    return "input and output dtypes differ";
  if (numel(*node.output(0)) == 0) return "empty outputs are not implemented";
  CopyPlan plan;
  return slice_plan(region, node, &plan);
}

Step build_slice(BuildContext& ctx) {
  CopyPlan plan;
  slice_plan(ctx.region, ctx.node, &plan);
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  const int64_t bytes = copy_element_bytes(ctx.node.input(0), ctx.node.output(0));
  return [=](std::vector<float*>& v) { strided_copy(plan, v[in], v[out], bytes); };
}

}  // namespace tessera::cpu
