// ArgMax and ArgMin (float32 in, int64 out) along one axis, the input read as [outer, n, inner]:
// with inner == 1 each row is scanned alone; otherwise rows of `inner` candidates are compared with
// the best so far one row at a time, so every read is unit-stride. Ties take the first index (the
// last with select_last_index); a NaN is above every number, as in core's kernel.
#include <tbb/parallel_for.h>

#include <cmath>

#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

// Whether v replaces the best b: larger (smaller for ArgMin), or equal with take_last; a NaN wins
// over every number.
inline bool replaces(float v, float b, bool take_last, bool smallest) {
  if (std::isnan(b)) return take_last && std::isnan(v);
  if (std::isnan(v)) return true;
  if (smallest) return take_last ? v <= b : v < b;
  return take_last ? v >= b : v > b;
}

}  // namespace

std::string query_arg_max(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* y = node.output(0);
  if (!is_f32(x) || y == nullptr || y->dtype != TSR_DTYPE_INT64) {
    return "only float32 input is implemented";
  }
  const int64_t axis = normalize_axis(node.attr_int("axis", 0), x->rank);
  if (axis < 0) return "axis out of range";
  if (x->dims[axis] == 0 || numel(*x) == 0) return "empty input";
  return "";
}

Step build_arg_max(BuildContext& ctx) {
  const tsr_tensor* x = ctx.node.input(0);
  const int64_t axis = normalize_axis(ctx.node.attr_int("axis", 0), x->rank);
  const bool last = ctx.node.attr_int("select_last_index", 0) != 0;
  const bool smallest = ctx.node.op_type() == "ArgMin";
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x->dims[d];
  for (int64_t d = axis + 1; d < x->rank; ++d) inner *= x->dims[d];
  const int64_t n = x->dims[axis];
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  return [=](std::vector<float*>& v) {
    const float* src = v[in];
    int64_t* idx = reinterpret_cast<int64_t*>(v[out]);
    if (inner == 1) {
      tbb::parallel_for(int64_t{0}, outer, [&](int64_t o) {
        const float* row = src + o * n;
        int64_t best = 0;
        for (int64_t j = 1; j < n; ++j) {
          if (replaces(row[j], row[best], last, smallest)) best = j;
        }
        idx[o] = best;
      });
      return;
    }
    // Column blocks of 1K candidates per task keep the best values in L1.
    constexpr int64_t kBlock = 1024;
    const int64_t blocks = (inner + kBlock - 1) / kBlock;
    tbb::parallel_for(int64_t{0}, outer * blocks, [&](int64_t item) {
      const int64_t o = item / blocks, j0 = (item % blocks) * kBlock;
      const int64_t len = std::min(kBlock, inner - j0);
      const float* base = src + o * n * inner + j0;
      int64_t* best = idx + o * inner + j0;
      float values[kBlock];
      std::copy(base, base + len, values);
      std::fill(best, best + len, int64_t{0});
      for (int64_t r = 1; r < n; ++r) {
        const float* row = base + r * inner;
        for (int64_t j = 0; j < len; ++j) {
          if (replaces(row[j], values[j], last, smallest)) {
            values[j] = row[j];
            best[j] = r;
          }
        }
      }
    });
  };
}

}  // namespace tessera::cpu
