// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// LayerNormalization over contiguous rows of `cols` elements (the axes from `axis` to the last),
// one work-item per row: the mean, then the variance around it (two passes, as the reference
// computes them), then y = (x - mean) / sqrt(var + eps) * scale[j] (+ bias[j] when has_bias).
__kernel void layer_norm_rows_f32(__global const float* x, __global const float* scale,
                                  __global const float* bias, __global float* y, int rows,
                                  int cols, float eps, int has_bias) {
  const int r = get_global_id(0);
  if (r >= rows) return;
  __global const float* xp = x + r * cols;
  __global float* yp = y + r * cols;
  float sum = 0.0f;
  for (int j = 0; j < cols; ++j) sum += xp[j];
  const float mean = sum / (float)cols;
  float sq = 0.0f;
  for (int j = 0; j < cols; ++j) {
    const float d = xp[j] - mean;
    sq += d * d;
  }
  const float inv = 1.0f / sqrt(sq / (float)cols + eps);
  for (int j = 0; j < cols; ++j) {
    const float v = (xp[j] - mean) * inv * scale[j];
    yp[j] = has_bias ? v + bias[j] : v;
  }
}

// The same with a work-group of (threads per row, rows) work-items: the threads of a row stride
// through its columns together (neighbours read neighbouring elements) and combine their sums
// through `part` (__local, local_size(0) * local_size(1) floats). For rows too few or too long
// for one work-item each (swin_t's [3136, 96] rows left an H100 idle for 300 us).
// local_size(0) is a power of two. Global (threads per row, rows rounded up to the group).
__kernel void layer_norm_group_f32(__global const float* x, __global const float* scale,
                                   __global const float* bias, __global float* y, int rows,
                                   int cols, float eps, int has_bias, __local float* part) {
  const int t = get_local_id(0), threads = get_local_size(0);
  const int r = get_global_id(1);
  __local float* row = part + get_local_id(1) * threads;
  // No early return: every work-item reaches the barriers; rows past the end read the last row.
  __global const float* xp = x + (size_t)min(r, rows - 1) * cols;
  const float2 moments = tsr_row_mean_m2(xp, cols, row);
  const float mean = moments.x;
  const float inv = 1.0f / sqrt(moments.y / (float)cols + eps);
  if (r >= rows) return;
  __global float* yp = y + (size_t)r * cols;
  for (int j = t; j < cols; j += threads) {
    const float v = (xp[j] - mean) * inv * scale[j];
    yp[j] = has_bias ? v + bias[j] : v;
  }
}
