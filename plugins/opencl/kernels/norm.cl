// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).

// GroupNormalization / InstanceNormalization over NCHW-like buffers: each of the n * groups
// work-items normalises one group, a contiguous run of `per_group` channels x `inner` elements,
// with its own mean and variance (two passes), then applies the channel's scale and bias.
__kernel void group_norm_f32(__global const float* x, __global const float* scale,
                             __global const float* bias, __global float* y, int groups_total,
                             int groups, int per_group, int inner, float epsilon) {
  const int g = get_global_id(0);
  if (g >= groups_total) return;
  const size_t len = (size_t)per_group * inner;
  const size_t start = (size_t)g * len;
  float mean = 0.0f;
  for (size_t j = 0; j < len; ++j) mean += x[start + j];
  mean /= (float)len;
  float var = 0.0f;
  for (size_t j = 0; j < len; ++j) {
    const float d = x[start + j] - mean;
    var += d * d;
  }
  const float inv = rsqrt(var / (float)len + epsilon);
  const int c0 = (g % groups) * per_group;
  for (size_t j = 0; j < len; ++j) {
    const int c = c0 + (int)(j / inner);
    y[start + j] = (x[start + j] - mean) * inv * scale[c] + bias[c];
  }
}

// y = x * scale[c] + shift[c] over a buffer viewed as (outer, channels, inner): BatchNormalization
// folded, on tensors of any rank >= 2 (channel axis 1).
__kernel void channel_affine_any_f32(__global const float* x, __global const float* scale,
                                     __global const float* shift, __global float* y, int n,
                                     int channels, int inner) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const int c = (i / inner) % channels;
  y[i] = x[i] * scale[c] + shift[c];
}
