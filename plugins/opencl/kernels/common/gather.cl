// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// Gather along one axis with an index tensor (constant, or computed at run time: token ids into
// an embedding table, the rows a TopK or ArgMax picked), of any dtype: TSR_ELEM is the element's
// type by size (float default, uint, ulong, uchar), TSR_IDX the indices' (long or int). The
// input is viewed as (outer, axis_dim, inner), the output as (outer, n_idx, inner); one
// work-item per output element. A negative index counts from the end, and one outside
// [-axis_dim, axis_dim) sets *bad (the run then fails naming the node) and reads as 0.
#ifndef TSR_ELEM
#define TSR_ELEM float
#endif
#ifndef TSR_IDX
#define TSR_IDX long
#endif
__kernel void gather_indexed(__global const TSR_ELEM* x, __global const TSR_IDX* idx,
                             __global TSR_ELEM* y, int outer, int axis_dim, int inner, int n_idx,
                             __global int* bad) {
  const int i = get_global_id(0);
  if (i >= outer * n_idx * inner) return;
  const int k = i % inner, j = (i / inner) % n_idx, o = i / (inner * n_idx);
  long v = (long)idx[j];
  if (v < 0) v += axis_dim;
  if (v < 0 || v >= axis_dim) {
    *bad = 1;
    y[i] = (TSR_ELEM)0;
    return;
  }
  y[i] = x[((size_t)o * axis_dim + (size_t)v) * inner + k];
}

// GatherElements: y[i] = x[i's coordinates with the `axis` one replaced by idx[i]], rank <= 6:
// `od` the output's (and indices') dims in the 6 slots, `xs` the input's strides, `axis` the
// slot of the gathered axis, `axis_dim` its size. Any dtype by element size; an index outside
// [-axis_dim, axis_dim) sets *bad (the run fails naming the node) and reads as 0.
__kernel void gather_elements(__global const TSR_ELEM* x, __global const TSR_IDX* idx,
                              __global TSR_ELEM* y, int n, int8 od, int8 xs, int axis,
                              int axis_dim, __global int* bad) {
  const int i = get_global_id(0);
  if (i >= n) return;
  int8 c = tsr_coords6(i, od);
  long v = (long)idx[i];
  if (v < 0) v += axis_dim;
  if (v < 0 || v >= axis_dim) {
    *bad = 1;
    y[i] = (TSR_ELEM)0;
    return;
  }
  switch (axis) {
    case 0: c.s0 = (int)v; break;
    case 1: c.s1 = (int)v; break;
    case 2: c.s2 = (int)v; break;
    case 3: c.s3 = (int)v; break;
    case 4: c.s4 = (int)v; break;
    default: c.s5 = (int)v; break;
  }
  y[i] = x[tsr_dot6(c, xs)];
}
