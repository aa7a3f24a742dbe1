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
