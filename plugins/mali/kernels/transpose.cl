// y = x with its axes permuted, rank <= 4 (shapes padded on the left with 1): one work-item per
// output element. od: the output dims; xs: for each output axis, the input stride of the axis it
// comes from.
__kernel void transpose_f32(__global const float* x, __global float* y, int n, int4 od, int4 xs) {
  const int i = get_global_id(0);
  if (i >= n) return;
  int r = i;
  const int c3 = r % od.w;
  r /= od.w;
  const int c2 = r % od.z;
  r /= od.z;
  const int c1 = r % od.y;
  const int c0 = r / od.y;
  y[i] = x[c0 * xs.x + c1 * xs.y + c2 * xs.z + c3 * xs.w];
}
