// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// Softmax over contiguous rows of `cols` elements; one work-item per row (max-subtracted).
__kernel void softmax_rows_f32(__global const float* x, __global float* y, int rows, int cols) {
  const int r = get_global_id(0);
  if (r >= rows) return;
  __global const float* xp = x + r * cols;
  __global float* yp = y + r * cols;
  float mx = -INFINITY;
  for (int j = 0; j < cols; ++j) mx = fmax(mx, xp[j]);
  float sum = 0.0f;
  for (int j = 0; j < cols; ++j) {
    const float e = exp(xp[j] - mx);
    yp[j] = e;
    sum += e;
  }
  const float inv = 1.0f / sum;
  for (int j = 0; j < cols; ++j) yp[j] *= inv;
}
