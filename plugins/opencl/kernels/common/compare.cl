// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// Comparisons and logical ops to a bool (uchar 0/1) output, the operands broadcast to the output
// `od` (s0..s5) through their strides (0 along a broadcast axis). TSR_T is the operands' type:
// float (default), long, int or uchar (bool), one build per type.
// op: 0 Equal, 1 Less, 2 LessOrEqual, 3 Greater, 4 GreaterOrEqual, 5 And, 6 Or, 7 Xor, 8 Not
// (of a; b unused).
#ifndef TSR_T
#define TSR_T float
#endif

__kernel void compare_strided(__global const TSR_T* a, __global const TSR_T* b,
                              __global uchar* y, int n, int8 od, int8 sa, int8 sb, int op) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const int8 c = tsr_coords6(i, od);
  const TSR_T x = a[tsr_dot6(c, sa)];
  const TSR_T z = b[tsr_dot6(c, sb)];
  const TSR_T zero = (TSR_T)0;
  int r;
  switch (op) {
    case 0: r = x == z; break;
    case 1: r = x < z; break;
    case 2: r = x <= z; break;
    case 3: r = x > z; break;
    case 4: r = x >= z; break;
    case 5: r = x != zero && z != zero; break;
    case 6: r = x != zero || z != zero; break;
    case 7: r = (x != zero) != (z != zero); break;
    default: r = x == zero; break;
  }
  y[i] = (uchar)r;
}

// IsNaN (op 0) and IsInf (op 1, +inf when `pos`, -inf when `neg`) of float32 values, to bool.
// Built without fast-math options, so isnan / isinf see NaN and infinities.
__kernel void classify_f32(__global const float* x, __global uchar* y, int n, int op, int pos,
                           int neg) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float v = x[i];
  const int r = op == 0 ? isnan(v) : (isinf(v) && ((v > 0.0f && pos) || (v < 0.0f && neg)));
  y[i] = (uchar)(r != 0);
}
