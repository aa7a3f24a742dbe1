// Split along one axis: each output is a strided copy of its slab of the input ([outer, part,
// inner] with the input's row pitch).
#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {

std::string query_split(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  if (copy_element_bytes(x, x) == 0) return "unsupported element type";
  const int64_t axis = normalize_axis(node.attr_int("axis", 0), x->rank);
  if (axis < 0) return "axis out of range";
  int64_t total = 0;
  for (int32_t i = 0; i < node.num_outputs(); ++i) {
    const tsr_tensor* y = node.output(i);
    if (y == nullptr) return "omitted outputs are not implemented";
    if (copy_element_bytes(x, y) == 0 || y->rank != x->rank)
      return "outputs must be of the input's dtype and rank";
    total += y->dims[axis];
  }
  if (total != x->dims[axis]) return "output sizes do not add up to the input's axis";
  return "";
}

Step build_split(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  const int64_t axis = normalize_axis(ctx.node.attr_int("axis", 0), x->rank);
  const std::vector<int64_t> in_dims = dims(*x);
  const std::vector<int64_t> strides = row_major_strides(in_dims);
  std::vector<CopyPlan> plans;
  std::vector<int32_t> outs;
  std::vector<bool> empty;
  int64_t start = 0;
  for (int32_t i = 0; i < ctx.node.num_outputs(); ++i) {
    const std::vector<int64_t> out_dims = dims(*ctx.node.output(i));
    plans.push_back(merge_copy_plan(out_dims, strides, start * strides[static_cast<size_t>(axis)]));
    start += out_dims[static_cast<size_t>(axis)];
    // Output 0 may be the end of a fused chain; the others are the node's own.
    outs.push_back(i == 0 ? ctx.output : ctx.node.output_index(i));
    empty.push_back(numel(*ctx.node.output(i)) == 0);
  }
  const int32_t in = ctx.node.input_index(0);
  const int64_t bytes = copy_element_bytes(x, x);
  return [=](std::vector<float*>& v) {
    for (size_t i = 0; i < plans.size(); ++i) {
      if (!empty[i]) strided_copy(plans[i], v[in], v[outs[i]], bytes);
    }
  };
}

}  // namespace tessera::cpu
