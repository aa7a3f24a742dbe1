// TopK (float32 values, int64 indices) along one axis: per row, a partial sort of the indices by
// value (largest or smallest first), ties in index order, NaN above every number, as core's
// kernel orders them. Rows run in parallel; a strided row is gathered into per-thread scratch.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

// A strict weak order with NaN above every number.
inline bool less_nan_last(float a, float b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return a < b;
}

struct RowTag {};
struct OrderTag {};

}  // namespace

std::string query_top_k(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  if (!is_f32(x) || !is_f32(node.output(0))) return "only float32 is implemented";
  if (node.num_outputs() != 2 || node.output(1)->dtype != TSR_DTYPE_INT64) {
    return "expects the Values and Indices outputs";
  }
  const int64_t axis = normalize_axis(node.attr_int("axis", -1), x->rank);
  if (axis < 0) return "axis out of range";
  if (numel(*node.output(0)) == 0) return "empty output";
  return "";
}

Step build_top_k(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  const int64_t axis = normalize_axis(ctx.node.attr_int("axis", -1), x->rank);
  const bool largest = ctx.node.attr_int("largest", 1) != 0;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x->dims[d];
  for (int64_t d = axis + 1; d < x->rank; ++d) inner *= x->dims[d];
  const int64_t n = x->dims[axis];
  const int64_t k = ctx.node.output(0)->dims[axis];
  const int32_t in = ctx.node.input_index(0), values = ctx.output;
  const int32_t indices = ctx.node.output_index(1);
  return [=](std::vector<float*>& v) {
    const float* src = v[in];
    float* yv = v[values];
    int64_t* yi = indices >= 0 ? reinterpret_cast<int64_t*>(v[indices]) : nullptr;
    tbb::parallel_for(int64_t{0}, outer * inner, [&](int64_t item) {
      const int64_t o = item / inner, i = item % inner;
      const float* row = src + o * n * inner + i;
      // The row contiguous (scratch when strided) and its indices as floats' positions.
      const float* r = row;
      if (inner != 1) {
        float* buf = thread_scratch<RowTag>(n);
        for (int64_t j = 0; j < n; ++j) buf[j] = row[j * inner];
        r = buf;
      }
      int64_t* order = reinterpret_cast<int64_t*>(thread_scratch<OrderTag>(2 * n));
      std::iota(order, order + n, int64_t{0});
      std::partial_sort(order, order + k, order + n, [&](int64_t p, int64_t q) {
        const bool before = largest ? less_nan_last(r[q], r[p]) : less_nan_last(r[p], r[q]);
        const bool after = largest ? less_nan_last(r[p], r[q]) : less_nan_last(r[q], r[p]);
        return before || (!after && p < q);
      });
      for (int64_t j = 0; j < k; ++j) {
        const int64_t at = (o * k + j) * inner + i;
        yv[at] = r[order[j]];
        if (yi != nullptr) yi[at] = order[j];
      }
    });
  };
}

}  // namespace tessera::cpu
