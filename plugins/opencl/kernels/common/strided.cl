// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// Offset of element i of a row-major walk over `dims` (s0..s5) when each axis moves by `steps`.
int strided_offset(int i, int8 dims, int8 steps) {
  int r = i;
  const int c5 = r % dims.s5;
  r /= dims.s5;
  const int c4 = r % dims.s4;
  r /= dims.s4;
  const int c3 = r % dims.s3;
  r /= dims.s3;
  const int c2 = r % dims.s2;
  r /= dims.s2;
  const int c1 = r % dims.s1;
  const int c0 = r / dims.s1;
  return c0 * steps.s0 + c1 * steps.s1 + c2 * steps.s2 + c3 * steps.s3 + c4 * steps.s4 +
         c5 * steps.s5;
}

// y[i] = x[base + sum_d c_d * xs_d] over the output coordinates (c0..c5) of element i, rank <= 6
// (shapes padded on the left with 1), one work-item per output element. od: the output dims
// (s0..s5); xs: per output axis the input stride it moves by; base: the input offset of the
// first element. Transpose (permuted strides) and Slice (strides times steps, a start offset)
// are both this copy (tessera_opencl/strided.hpp computes the arguments).
__kernel void strided_copy_f32(__global const float* x, __global float* y, int n, int8 od,
                               int8 xs, int base) {
  const int i = get_global_id(0);
  if (i >= n) return;
  y[i] = x[base + strided_offset(i, od, xs)];
}

// The inverse: input element i (its coordinates over `xd`) written to y[base + sum_d c_d * ys_d]
// (Concat along any axis: each input stored at its offset with the output's strides).
__kernel void strided_store_f32(__global const float* x, __global float* y, int n, int8 xd,
                                int8 ys, int base) {
  const int i = get_global_id(0);
  if (i >= n) return;
  y[base + strided_offset(i, xd, ys)] = x[i];
}
