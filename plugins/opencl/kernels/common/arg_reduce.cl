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
