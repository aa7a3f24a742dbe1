// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// The copies move elements without reading them, so one build per element size serves every
// dtype: TSR_ELEM is float (default), uint, ulong or uchar (tessera_opencl/op_helpers.hpp,
// element_defines).
#ifndef TSR_ELEM
#define TSR_ELEM float
#endif

// y[i] = x[base + sum_d c_d * xs_d] over the output coordinates (c0..c5) of element i, rank <= 6
// (shapes padded on the left with 1), one work-item per output element. od: the output dims
// (s0..s5); xs: per output axis the input stride it moves by; base: the input offset of the
// first element. Transpose (permuted strides) and Slice (strides times steps, a start offset)
// are both this copy (tessera_opencl/strided.hpp computes the arguments).
__kernel void strided_copy_f32(__global const TSR_ELEM* x, __global TSR_ELEM* y, int n, int8 od,
                               int8 xs, int base) {
  const int i = get_global_id(0);
  if (i >= n) return;
  y[i] = x[base + tsr_walk6(i, od, xs)];
}

// The inverse: input element i (its coordinates over `xd`) written to y[base + sum_d c_d * ys_d]
// (Concat along any axis: each input stored at its offset with the output's strides).
__kernel void strided_store_f32(__global const TSR_ELEM* x, __global TSR_ELEM* y, int n, int8 xd,
                                int8 ys, int base) {
  const int i = get_global_id(0);
  if (i >= n) return;
  y[base + tsr_walk6(i, xd, ys)] = x[i];
}

// Where: y[i] = cond ? a : b, the three operands broadcast to the output `od` (s0..s5) through
// their strides (0 along a broadcast axis). A selection moves elements without reading them, so
// it is built per element size like the copies.
__kernel void where_strided(__global const uchar* cond, __global const TSR_ELEM* a,
                            __global const TSR_ELEM* b, __global TSR_ELEM* y, int n, int8 od,
                            int8 sc, int8 sa, int8 sb) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const int8 c = tsr_coords6(i, od);
  y[i] = cond[tsr_dot6(c, sc)] ? a[tsr_dot6(c, sa)] : b[tsr_dot6(c, sb)];
}

// Trilu: the upper (upper = 1) or lower triangle of each rows x cols matrix of the last two dims,
// other elements 0; upper keeps col - row >= k, lower col - row <= k. Moves elements without
// reading them, so it is built per element size like the copies.
__kernel void trilu_any(__global const TSR_ELEM* x, __global TSR_ELEM* y, int n, int rows,
                        int cols, int k, int upper) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const int c = i % cols, r = (i / cols) % rows;
  const bool keep = upper ? c - r >= k : c - r <= k;
  y[i] = keep ? x[i] : (TSR_ELEM)0;
}

// ScatterND's writes (the output already holds a copy of the data): update element u goes to
// element `within` of slice u / slice_len, which starts at offsets[u / slice_len]. The offsets
// are the plugin's, computed from constant indices it checked to be in range and distinct, so
// no two work-items write one element.
__kernel void scatter_slices(__global const TSR_ELEM* updates, __global const int* offsets,
                             __global TSR_ELEM* y, int n, int slice_len) {
  const int u = get_global_id(0);
  if (u >= n) return;
  y[offsets[u / slice_len] + u % slice_len] = updates[u];
}
