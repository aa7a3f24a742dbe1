// Gather with constant indices (a class token, a fixed channel pick): the input is
// [outer, axis, inner] and each index copies one inner-long run per outer index.
#include <tbb/parallel_for.h>

#include <cstring>

#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {

std::string query_gather(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  if (!is_f32(x) || !is_f32(node.output(0))) return "only float32 data is implemented";
  const int64_t axis = normalize_axis(node.attr_int("axis", 0), x->rank);
  if (axis < 0) return "axis out of range";
  std::vector<int64_t> idx;
  if (!constant_ints(node.input(1), &idx)) return "indices must be an integer constant";
  const int64_t e = x->dims[axis];
  for (int64_t i : idx) {
    if (i < -e || i >= e) return "index " + std::to_string(i) + " out of range";
  }
  return "";
}

Step build_gather(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  const int64_t axis = normalize_axis(ctx.node.attr_int("axis", 0), x->rank);
  std::vector<int64_t> idx;
  constant_ints(ctx.node.input(1), &idx);
  const int64_t e = x->dims[axis];
  for (int64_t& i : idx) i = i < 0 ? i + e : i;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x->dims[d];
  for (int64_t d = axis + 1; d < x->rank; ++d) inner *= x->dims[d];
  const int64_t count = static_cast<int64_t>(idx.size());
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  return [=](std::vector<float*>& v) {
    tbb::parallel_for(int64_t{0}, outer * count, [&](int64_t item) {
      const int64_t o = item / count, k = item % count;
      std::memcpy(v[out] + item * inner, v[in] + (o * e + idx[static_cast<size_t>(k)]) * inner,
                  static_cast<size_t>(inner) * sizeof(float));
    });
  };
}

}  // namespace tessera::cpu
