// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// Built with TSR_LOG_SOFTMAX the kernels compute LogSoftmax, x - max - log(sum exp(x - max)),
// which stays finite where the softmax underflows to 0.

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
#ifndef TSR_LOG_SOFTMAX
    yp[j] = e;
#endif
    sum += e;
  }
#ifdef TSR_LOG_SOFTMAX
  // (x - max) first: max + log(sum) would round away log(sum)'s digits beside a large max.
  const float lse = log(sum);
  for (int j = 0; j < cols; ++j) yp[j] = (xp[j] - mx) - lse;
#else
  const float inv = 1.0f / sum;
  for (int j = 0; j < cols; ++j) yp[j] *= inv;
#endif
}

// Softmax along a middle axis (opset 13 on axis 1 of an attention map or a segmentation head):
// the input viewed as (outer, len, inner), one work-item per (outer, inner) column walking its
// `len` elements `inner` apart.
__kernel void softmax_axis_f32(__global const float* x, __global float* y, int outer, int len,
                               int inner) {
  const int i = get_global_id(0);
  if (i >= outer * inner) return;
  const size_t base = (size_t)(i / inner) * len * inner + i % inner;
  float mx = -INFINITY;
  for (int j = 0; j < len; ++j) mx = fmax(mx, x[base + (size_t)j * inner]);
  float sum = 0.0f;
  for (int j = 0; j < len; ++j) {
    const float e = exp(x[base + (size_t)j * inner] - mx);
#ifndef TSR_LOG_SOFTMAX
    y[base + (size_t)j * inner] = e;
#endif
    sum += e;
  }
#ifdef TSR_LOG_SOFTMAX
  const float lse = log(sum);
  for (int j = 0; j < len; ++j) {
    y[base + (size_t)j * inner] = (x[base + (size_t)j * inner] - mx) - lse;
  }
#else
  const float inv = 1.0f / sum;
  for (int j = 0; j < len; ++j) y[base + (size_t)j * inner] *= inv;
#endif
}
