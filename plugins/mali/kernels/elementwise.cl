// Element-wise kernels on NCHW float buffers: unary activations, broadcasting binary ops (rank
// <= 4, strides of 0 on broadcast dims), per-channel affine (BatchNormalization) and the block
// copy used by Concat and copies.

// op: 0 relu, 1 clip(a, b), 2 leaky relu(a), 3 sigmoid, 4 hard swish, 5 copy.
__kernel void unary_f32(__global const float* x, __global float* y, int n, int op, float a,
                        float b) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float v = x[i];
  float r = v;
  if (op == 0) r = fmax(v, 0.0f);
  else if (op == 1) r = fmin(fmax(v, a), b);
  else if (op == 2) r = v >= 0.0f ? v : a * v;
  else if (op == 3) r = 1.0f / (1.0f + exp(-v));
  else if (op == 4) r = v * fmax(0.0f, fmin(1.0f, v / 6.0f + 0.5f));
  y[i] = r;
}

// y[i] = a[..] (op) b[..] over a 4-D output; dims and strides padded on the left with 1 / 0.
// op: 0 add, 1 mul.
__kernel void binary_f32(__global const float* a, __global const float* b, __global float* y,
                         int4 dims, int4 astr, int4 bstr, int op) {
  const int i = get_global_id(0);
  const int n = dims.x * dims.y * dims.z * dims.w;
  if (i >= n) return;
  int r = i;
  const int i3 = r % dims.w; r /= dims.w;
  const int i2 = r % dims.z; r /= dims.z;
  const int i1 = r % dims.y;
  const int i0 = r / dims.y;
  const float va = a[i0 * astr.x + i1 * astr.y + i2 * astr.z + i3 * astr.w];
  const float vb = b[i0 * bstr.x + i1 * bstr.y + i2 * bstr.z + i3 * bstr.w];
  y[i] = op == 0 ? va + vb : va * vb;
}

// y = x * scale[c] + shift[c] with c = (i / inner) % channels.
__kernel void channel_affine_f32(__global const float* x, __global const float* scale,
                                 __global const float* shift, __global float* y, int n,
                                 int channels, int inner) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const int c = (i / inner) % channels;
  y[i] = x[i] * scale[c] + shift[c];
}

// dst[o * dst_inner + dst_offset + j] = src[o * src_inner + j] for j < src_inner.
__kernel void copy_block_f32(__global const float* src, __global float* dst, int outer,
                             int src_inner, int dst_inner, int dst_offset) {
  const int i = get_global_id(0);
  if (i >= outer * src_inner) return;
  const int o = i / src_inner;
  const int j = i - o * src_inner;
  dst[o * dst_inner + dst_offset + j] = src[i];
}
