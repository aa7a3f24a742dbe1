// Gather over data of any element type with constant indices (a class token, a fixed channel pick)
// or indices known only at run time (token ids into an embedding table): the input is [outer, axis,
// inner] and each index copies one inner-long run per outer index.
#include <tbb/parallel_for.h>

#include <cstring>

#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {

namespace {

bool int_indices(const tsr_tensor* t) {
  return t != nullptr && (t->dtype == TSR_DTYPE_INT64 || t->dtype == TSR_DTYPE_INT32);
}

// Copies run `idx[k]` (already in [0, e)) of every outer slice: output item (o, k) is the
// inner-long run at (o, idx[k]); `inner` counts bytes.
void gather_runs(const void* data, const int64_t* idx, int64_t count, int64_t outer, int64_t e,
                 int64_t inner, void* out) {
  const auto* x = static_cast<const unsigned char*>(data);
  auto* y = static_cast<unsigned char*>(out);
  tbb::parallel_for(int64_t{0}, outer * count, [&](int64_t item) {
    const int64_t o = item / count, k = item % count;
    std::memcpy(y + item * inner, x + (o * e + idx[k]) * inner, static_cast<size_t>(inner));
  });
}

}  // namespace

std::string query_gather(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  if (copy_element_bytes(x, node.output(0)) == 0) return "data and output dtypes differ";
  const int64_t axis = normalize_axis(node.attr_int("axis", 0), x->rank);
  if (axis < 0) return "axis out of range";
  const tsr_tensor* indices = node.input(1);
  if (!int_indices(indices)) return "indices must be int64 or int32";
  std::vector<int64_t> idx;
  if (!constant_ints(indices, &idx)) return "";  // checked as each run reads them
  const int64_t e = x->dims[axis];
  for (int64_t i : idx) {
    if (i < -e || i >= e) return "index " + std::to_string(i) + " out of range";
  }
  return "";
}

Step build_gather(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  const tsr_tensor* indices = ctx.node.input(1);
  const int64_t axis = normalize_axis(ctx.node.attr_int("axis", 0), x->rank);
  const int64_t e = x->dims[axis];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x->dims[d];
  for (int64_t d = axis + 1; d < x->rank; ++d) inner *= x->dims[d];
  inner *= copy_element_bytes(x, ctx.node.output(0));
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  std::vector<int64_t> idx;
  if (constant_ints(indices, &idx)) {
    // A class token, a fixed channel pick: normalised once.
    for (int64_t& i : idx) i = i < 0 ? i + e : i;
    const int64_t count = static_cast<int64_t>(idx.size());
    return [=](std::vector<float*>& v) {
      gather_runs(v[in], idx.data(), count, outer, e, inner, v[out]);
    };
  }
  // Indices computed or fed at run time (token ids into an embedding table): each is checked
  // against the axis before any copy, so a bad id is an error naming the node, never a read
  // outside the table.
  const int32_t ii = ctx.node.input_index(1);
  const int64_t count = numel(*indices);
  const bool wide = indices->dtype == TSR_DTYPE_INT64;
  const std::string node = ctx.node.describe();
  return [=](std::vector<float*>& v) {
    std::vector<int64_t> at(static_cast<size_t>(count));
    for (int64_t k = 0; k < count; ++k) {
      const int64_t i = wide ? reinterpret_cast<const int64_t*>(v[ii])[k]
                             : reinterpret_cast<const int32_t*>(v[ii])[k];
      at[static_cast<size_t>(k)] = checked_index(i, e, node);
    }
    gather_runs(v[in], at.data(), count, outer, e, inner, v[out]);
  };
}

}  // namespace tessera::cpu
