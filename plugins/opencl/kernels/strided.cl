// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// y[i] = x[base + sum_d c_d * xs_d] over the output coordinates (c0..c5) of element i, rank <= 6
// (shapes padded on the left with 1), one work-item per output element. od: the output dims
// (s0..s5); xs: per output axis the input stride it moves by; base: the input offset of the
// first element. Transpose (permuted strides) and Slice (strides times steps, a start offset)
// are both this copy (tessera_opencl/strided.hpp computes the arguments).
__kernel void strided_copy_f32(__global const float* x, __global float* y, int n, int8 od,
                               int8 xs, int base) {
  const int i = get_global_id(0);
  if (i >= n) return;
  int r = i;
  const int c5 = r % od.s5;
  r /= od.s5;
  const int c4 = r % od.s4;
  r /= od.s4;
  const int c3 = r % od.s3;
  r /= od.s3;
  const int c2 = r % od.s2;
  r /= od.s2;
  const int c1 = r % od.s1;
  const int c0 = r / od.s1;
  y[i] = x[base + c0 * xs.s0 + c1 * xs.s1 + c2 * xs.s2 + c3 * xs.s3 + c4 * xs.s4 + c5 * xs.s5];
}

// The inverse: input element i (its coordinates over `xd`) written to y[base + sum_d c_d * ys_d]
// (Concat along any axis: each input stored at its offset with the output's strides).
__kernel void strided_store_f32(__global const float* x, __global float* y, int n, int8 xd,
                                int8 ys, int base) {
  const int i = get_global_id(0);
  if (i >= n) return;
  int r = i;
  const int c5 = r % xd.s5;
  r /= xd.s5;
  const int c4 = r % xd.s4;
  r /= xd.s4;
  const int c3 = r % xd.s3;
  r /= xd.s3;
  const int c2 = r % xd.s2;
  r /= xd.s2;
  const int c1 = r % xd.s1;
  const int c0 = r / xd.s1;
  y[base + c0 * ys.s0 + c1 * ys.s1 + c2 * ys.s2 + c3 * ys.s3 + c4 * ys.s4 + c5 * ys.s5] = x[i];
}
