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

// The same with a work-group of local_size(0) work-items (a power of two) per group, one group
// per global id 1: they stride through the group together and combine their sums through
// `part` (__local, local_size(0) floats). For groups too long or too few for one work-item each
// (MobileViT-v2's 1 x 4096-element groups left all but one work-item of a GPU idle).
__kernel void group_norm_split_f32(__global const float* x, __global const float* scale,
                                   __global const float* bias, __global float* y, int groups_total,
                                   int groups, int per_group, int inner, float epsilon,
                                   __local float* part) {
  const int t = get_local_id(0), threads = get_local_size(0);
  const int g = get_global_id(1);
  const size_t len = (size_t)per_group * inner;
  __global const float* xg = x + (size_t)g * len;
  const float2 moments = tsr_row_mean_m2(xg, len, part);
  const float mean = moments.x;
  const float inv = rsqrt(moments.y / (float)len + epsilon);
  __global float* yg = y + (size_t)g * len;
  const int c0 = (g % groups) * per_group;
  for (size_t j = t; j < len; j += threads) {
    const int c = c0 + (int)(j / inner);
    yg[j] = (xg[j] - mean) * inv * scale[c] + bias[c];
  }
}

// Groups too long for one work-group (MobileViT-v2: one group of 65,536 elements per image),
// in two steps. group_norm_partial_f32: work-group (p, g) of local_size(0) work-items takes
// chunk p of `parts` of group g and writes its count, mean and sum of squared deviations
// (about its own mean) to stats[(g * parts + p) * 3 ...]. Global (threads, parts, groups_total).
__kernel void group_norm_partial_f32(__global const float* x, __global float* stats, int len,
                                     __local float* part) {
  const int p = get_global_id(1), parts = get_global_size(1), g = get_global_id(2);
  const int chunk = (len + parts - 1) / parts;
  const int start = min(p * chunk, len), end = min(start + chunk, len);
  const int count = end - start;
  const float2 moments = tsr_row_mean_m2(x + (size_t)g * len + start, count, part);
  if (get_local_id(0) == 0) {
    __global float* s = stats + ((size_t)g * parts + p) * 3;
    s[0] = (float)count;
    s[1] = moments.x;
    s[2] = moments.y;
  }
}

// The second step, one work-item per element: the chunks' statistics of the element's group
// combined (Chan et al.'s pairwise update), then normalised, scaled and shifted per channel.
__kernel void group_norm_apply_f32(__global const float* x, __global const float* stats,
                                   __global const float* scale, __global const float* bias,
                                   __global float* y, int n, int parts, int groups, int per_group,
                                   int inner, float epsilon) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const int len = per_group * inner;
  const int g = i / len, j = i % len;
  __global const float* s = stats + (size_t)g * parts * 3;
  float count = 0.0f, mean = 0.0f, m2 = 0.0f;
  for (int p = 0; p < parts; ++p) {
    const float nb = s[p * 3];
    if (nb == 0.0f) continue;
    const float total = count + nb;
    const float delta = s[p * 3 + 1] - mean;
    mean += delta * nb / total;
    m2 += s[p * 3 + 2] + delta * delta * count * nb / total;
    count = total;
  }
  const float inv = rsqrt(m2 / (float)len + epsilon);
  const int c = (g % groups) * per_group + j / inner;
  y[i] = (x[i] - mean) * inv * scale[c] + bias[c];
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
