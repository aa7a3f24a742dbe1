// Element-wise kernels on NCHW float buffers: unary activations, broadcasting binary ops (rank
// <= 4, strides of 0 on broadcast dims), per-channel affine (BatchNormalization) and the block
// copy used by Concat and copies. unary_f32 and binary_f32 also run over a whole NCHW4c buffer
// (padding included); channel_affine_4c_f32 is the NCHW4c affine.

// op: 0 relu, 1 clip(a, b), 2 leaky relu(a), 3 sigmoid, 4 hard swish, 5 copy.
// c4 = (C, H * W, CB, 1) over an NCHW4c buffer: lanes of channels >= C stay zero (sigmoid(0) and
// clip(0) need not be); c4.w == 0 for NCHW.
__kernel void unary_f32(__global const float* x, __global float* y, int n, int op, float a,
                        float b, int4 c4) {
  const int i = get_global_id(0);
  if (i >= n) return;
  if (c4.w != 0 && ((i >> 2) / c4.y % c4.z) * 4 + (i & 3) >= c4.x) {
    y[i] = 0.0f;
    return;
  }
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

// y = x * scale[c] + shift[c] with c = (i / inner) % channels. The NCHW4c variant works on
// float4 (n, channels and inner count float4 and channel blocks); its scale and shift are zero
// padded so padded lanes stay zero.
#define TSR_CHANNEL_AFFINE(NAME, T)                                                            \
  __kernel void NAME(__global const T* x, __global const T* scale, __global const T* shift,   \
                     __global T* y, int n, int channels, int inner) {                          \
    const int i = get_global_id(0);                                                            \
    if (i >= n) return;                                                                        \
    const int c = (i / inner) % channels;                                                      \
    y[i] = mad(x[i], scale[c], shift[c]);                                                      \
  }
TSR_CHANNEL_AFFINE(channel_affine_f32, float)
TSR_CHANNEL_AFFINE(channel_affine_4c_f32, float4)

// dst[o * dst_inner + dst_offset + j] = src[o * src_inner + j] for j < src_inner.
__kernel void copy_block_f32(__global const float* src, __global float* dst, int outer,
                             int src_inner, int dst_inner, int dst_offset) {
  const int i = get_global_id(0);
  if (i >= outer * src_inner) return;
  const int o = i / src_inner;
  const int j = i - o * src_inner;
  dst[o * dst_inner + dst_offset + j] = src[i];
}
