// Tile (any element type) as one strided copy: output dim d split into [repeats[d], x dim d] with
// source strides [0, x stride d], so the innermost input dim is copied whole (memcpy) per output
// row.
#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {

std::string query_tile(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  if (copy_element_bytes(x, node.output(0)) == 0) return "input and output dtypes differ";
  std::vector<int64_t> repeats;
  if (!constant_ints(node.input(1), &repeats)) return "repeats must be an integer constant";
  if (static_cast<int64_t>(repeats.size()) != x->rank) return "one repeat count per input dim";
  for (int64_t r : repeats) {
    if (r < 0) return "repeats must be >= 0";
  }
  if (numel(*node.output(0)) == 0) return "empty output";
  return "";
}

Step build_tile(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  std::vector<int64_t> repeats;
  constant_ints(ctx.node.input(1), &repeats);
  const std::vector<int64_t> in_dims = dims(*x);
  const std::vector<int64_t> in_strides = row_major_strides(in_dims);
  std::vector<int64_t> out_dims, strides;
  for (size_t d = 0; d < in_dims.size(); ++d) {
    out_dims.push_back(repeats[d]);
    strides.push_back(0);
    out_dims.push_back(in_dims[d]);
    strides.push_back(in_strides[d]);
  }
  const CopyPlan plan = merge_copy_plan(out_dims, strides, 0);
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  const int64_t bytes = copy_element_bytes(x, ctx.node.output(0));
  return [=](std::vector<float*>& v) { strided_copy(plan, v[in], v[out], bytes); };
}

}  // namespace tessera::cpu
