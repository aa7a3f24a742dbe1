// y[i] = x[base + c0 * xs.x + c1 * xs.y + c2 * xs.z + c3 * xs.w] over the output coordinates
// (c0..c3) of element i, rank <= 4 (shapes padded on the left with 1), one work-item per output
// element. od: the output dims; xs: per output axis the input stride it moves by; base: the
// input offset of the first element. Transpose (permuted strides) and Slice (strides times steps,
// a start offset) are both this copy.
__kernel void strided_copy_f32(__global const float* x, __global float* y, int n, int4 od,
                               int4 xs, int base) {
  const int i = get_global_id(0);
  if (i >= n) return;
  int r = i;
  const int c3 = r % od.w;
  r /= od.w;
  const int c2 = r % od.z;
  r /= od.z;
  const int c1 = r % od.y;
  const int c0 = r / od.y;
  y[i] = x[base + c0 * xs.x + c1 * xs.y + c2 * xs.z + c3 * xs.w];
}
