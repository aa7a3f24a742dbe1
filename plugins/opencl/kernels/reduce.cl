// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// Reductions over the trailing `cols` elements of each row, one work-item per row.
// op: 0 L2 norm (sqrt of the sum of squares), 1 mean, 2 sum.
__kernel void reduce_rows_f32(__global const float* x, __global float* y, int rows, int cols,
                              int op) {
  const int r = get_global_id(0);
  if (r >= rows) return;
  __global const float* p = x + (size_t)r * cols;
  float acc = 0.0f;
  if (op == 0) {
    for (int j = 0; j < cols; ++j) acc += p[j] * p[j];
    y[r] = sqrt(acc);
    return;
  }
  for (int j = 0; j < cols; ++j) acc += p[j];
  y[r] = op == 1 ? acc / (float)cols : acc;
}
