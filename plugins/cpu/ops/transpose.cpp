// Transpose as one strided copy: the permuted source strides are merged where they chain, so a
// channel shuffle ([N, g, C/g, H, W] with perm 0 2 1 3 4) copies whole H*W planes with memcpy.
#include <numeric>

#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

std::vector<int64_t> permutation(const NodeView& node, int64_t rank) {
  std::vector<int64_t> perm = node.attr_ints("perm", {});
  if (perm.empty()) {
    perm.resize(static_cast<size_t>(rank));
    std::iota(perm.rbegin(), perm.rend(), 0);  // default: reverse the axes
  }
  return perm;
}

}  // namespace

std::string query_transpose(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  if (copy_element_bytes(x, node.output(0)) == 0) return "input and output dtypes differ";
  const std::vector<int64_t> perm = permutation(node, x->rank);
  if (static_cast<int64_t>(perm.size()) != x->rank) return "perm must list every axis";
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= x->rank || seen[static_cast<size_t>(p)]) return "perm is not a permutation";
    seen[static_cast<size_t>(p)] = true;
  }
  return "";
}

Step build_transpose(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  const std::vector<int64_t> in_dims = dims(*x);
  const std::vector<int64_t> in_strides = row_major_strides(in_dims);
  const std::vector<int64_t> perm = permutation(ctx.node, x->rank);
  std::vector<int64_t> out_dims, strides;
  for (int64_t p : perm) {
    out_dims.push_back(in_dims[static_cast<size_t>(p)]);
    strides.push_back(in_strides[static_cast<size_t>(p)]);
  }
  const CopyPlan plan = merge_copy_plan(out_dims, strides, 0);
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  const int64_t bytes = copy_element_bytes(x, ctx.node.output(0));
  return [=](std::vector<float*>& v) { strided_copy(plan, v[in], v[out], bytes); };
}

}  // namespace tessera::cpu
