// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// ArgMax / ArgMin along one axis: the input seen as [outer, axis, inner], one work-item per
// output element walking the axis. TSR_T is the input's type (float default, long, int).
// op: 0 max, 1 min; last: 1 keeps the last index among equal extremes (select_last_index),
// 0 the first. A NaN ranks above every number for both ops (core's rule): the first NaN wins, or
// the last with `last`. The output is int64, as ONNX has it.
#ifndef TSR_T
#define TSR_T float
#endif

__kernel void arg_reduce(__global const TSR_T* x, __global long* y, int outer, int axis,
                         int inner, int op, int last) {
  const int i = get_global_id(0);
  if (i >= outer * inner) return;
  const int o = i / inner, r = i % inner;
  __global const TSR_T* p = x + (size_t)o * axis * inner + r;
  TSR_T best = p[0];
  int at = 0;
  for (int k = 1; k < axis; ++k) {
    const TSR_T v = p[(size_t)k * inner];
    // x != x only for a NaN (integers never).
    bool better;
    if (best != best) {
      better = last && v != v;
    } else if (v != v) {
      better = true;
    } else {
      better = op == 0 ? (v > best || (last && v == best)) : (v < best || (last && v == best));
    }
    if (better) {
      best = v;
      at = k;
    }
  }
  y[i] = (long)at;
}

// Whether element a (at index ia) comes before b (at ib) in TopK's order: larger first
// (`largest`) or smaller first, a NaN above every number (first when largest, last otherwise),
// equal values in index order. x != x only for a NaN (integers never).
inline bool tsr_topk_before(TSR_T a, int ia, TSR_T b, int ib, int largest) {
  const bool an = a != a, bn = b != b;
  if (an || bn) return an && bn ? ia < ib : (an == (largest != 0));
  if (a == b) return ia < ib;
  return largest ? a > b : a < b;
}

// TopK along one axis, the input seen as [outer, n, inner]: one work-item per input element
// counts the elements that come before it (stopping at k); one with fewer than k before it is
// output number `rank` of its column. O(n) per element, no sort and no shared state, which suits
// the few hundred to few thousand candidates of detection heads and decoders (the plugin bounds
// n). Values keep the input's type; indices are int64.
__kernel void top_k_rank(__global const TSR_T* x, __global TSR_T* values, __global long* indices,
                         int outer, int n, int inner, int k, int largest) {
  const int g = get_global_id(0);
  if (g >= outer * n * inner) return;
  const int r = g % inner, i = (g / inner) % n, o = g / (inner * n);
  __global const TSR_T* col = x + (size_t)o * n * inner + r;
  const TSR_T v = col[(size_t)i * inner];
  int rank = 0;
  for (int j = 0; j < n && rank < k; ++j) {
    if (j != i && tsr_topk_before(col[(size_t)j * inner], j, v, i, largest)) ++rank;
  }
  if (rank >= k) return;
  const size_t at = ((size_t)o * k + rank) * inner + r;
  values[at] = v;
  indices[at] = (long)i;
}

// CumSum along one axis, the input seen as [outer, n, inner]: one work-item per column adds its
// n elements in order (`exclusive` leaves each element out of its own sum, `reverse` runs from
// the end). TSR_T as above; integer sums wrap (two's complement on every OpenCL device).
__kernel void cum_sum(__global const TSR_T* x, __global TSR_T* y, int outer, int n, int inner,
                      int exclusive, int reverse) {
  const int g = get_global_id(0);
  if (g >= outer * inner) return;
  const size_t base = (size_t)(g / inner) * n * inner + g % inner;
  TSR_T acc = (TSR_T)0;
  for (int s = 0; s < n; ++s) {
    const size_t at = base + (size_t)(reverse ? n - 1 - s : s) * inner;
    const TSR_T v = x[at];
    if (exclusive) {
      y[at] = acc;
      acc += v;
    } else {
      acc += v;
      y[at] = acc;
    }
  }
}
