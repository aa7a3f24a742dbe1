// ArgMax and ArgMin (float32, int32 or int64 in, int64 out) along one axis, the input read as
// [outer, n, inner]: with inner == 1 each row is scanned alone; otherwise rows of `inner`
// candidates are compared with the best so far one row at a time, so every read is unit-stride.
// Ties take the first index (the last with select_last_index); a float NaN is above every number,
// as in core's kernel. Integer inputs are class ids and lengths of exported decoders (the shortest
// sequence, a CTC decode's best id), so the scan is a template over the element type.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

// Whether v replaces the best b: larger (smaller for ArgMin), or equal with take_last; a float NaN
// wins over every number.
template <typename T>
inline bool replaces(T v, T b, bool take_last, bool smallest) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(b)) return take_last && std::isnan(v);
    if (std::isnan(v)) return true;
  }
  if (smallest) return take_last ? v <= b : v < b;
  return take_last ? v >= b : v > b;
}

template <typename T>
Step arg_step(int32_t in, int32_t out, int64_t outer, int64_t n, int64_t inner, bool last,
              bool smallest) {
  return [=](std::vector<float*>& v) {
    const T* src = reinterpret_cast<const T*>(v[in]);
    int64_t* idx = reinterpret_cast<int64_t*>(v[out]);
    if (inner == 1) {
      tbb::parallel_for(int64_t{0}, outer, [&](int64_t o) {
        const T* row = src + o * n;
        int64_t best = 0;
        for (int64_t j = 1; j < n; ++j) {
          if (replaces<T>(row[j], row[best], last, smallest)) best = j;
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
      const T* base = src + o * n * inner + j0;
      int64_t* best = idx + o * inner + j0;
      T values[kBlock];
      std::copy(base, base + len, values);
      std::fill(best, best + len, int64_t{0});
      for (int64_t r = 1; r < n; ++r) {
        const T* row = base + r * inner;
        for (int64_t j = 0; j < len; ++j) {
          if (replaces<T>(row[j], values[j], last, smallest)) {
            values[j] = row[j];
            best[j] = r;
          }
        }
      }
    });
  };
}

bool arg_input(const tsr_tensor* x) {
  return x != nullptr && (x->dtype == TSR_DTYPE_FLOAT32 || x->dtype == TSR_DTYPE_INT32 ||
                          x->dtype == TSR_DTYPE_INT64);
}

}  // namespace

std::string query_arg_max(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* y = node.output(0);
  if (!arg_input(x) || y == nullptr || y->dtype != TSR_DTYPE_INT64) {
    return "only float32, int32 or int64 input is implemented";
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
  switch (x->dtype) {
    case TSR_DTYPE_INT32:
      return arg_step<int32_t>(in, out, outer, n, inner, last, smallest);
    case TSR_DTYPE_INT64:
      return arg_step<int64_t>(in, out, outer, n, inner, last, smallest);
    default:
      return arg_step<float>(in, out, outer, n, inner, last, smallest);
  }
}

}  // namespace tessera::cpu
