// Element-wise kernels on NCHW float buffers: unary activations, broadcasting binary ops (rank
// <= 4, strides of 0 on broadcast dims), per-channel affine (BatchNormalization) and the block
// copy used by Concat and copies. unary_f32 and binary_f32 also run over a whole NCHW4c buffer
// (padding included); channel_affine_4c_f32 is the NCHW4c affine.

// Every kernel here handles VEC (build-time knob "vec", common.cl) consecutive output floats per
// work-item: one vloadn/vstoren when they lie in one contiguous run of the operands (one row, one
// channel plane), else element by element, so any tensor size is correct (global range
// ceil(n / VEC)).

// op: 0 relu, 1 clip(a, b), 2 leaky relu(a), 3 sigmoid, 4 hard swish, 5 copy,
// 6 hard sigmoid (alpha a, beta b), 7 erf.
inline floatv tsr_unary(floatv v, int op, float a, float b) {
  if (op == 0) return fmax(v, 0.0f);
  if (op == 1) return fmin(fmax(v, a), b);
  if (op == 2) return select(v * a, v, isgreaterequal(v, (floatv)(0.0f)));
  if (op == 3) return 1.0f / (1.0f + exp(-v));
  if (op == 4) return v * fmax(fmin(v / 6.0f + 0.5f, 1.0f), 0.0f);
  if (op == 6) return fmax(fmin(v * a + b, 1.0f), 0.0f);
  if (op == 7) return erf(v);
  return v;
}
inline float tsr_unary1(float v, int op, float a, float b) {
  if (op == 0) return fmax(v, 0.0f);
  if (op == 1) return fmin(fmax(v, a), b);
  if (op == 2) return v >= 0.0f ? v : a * v;
  if (op == 3) return 1.0f / (1.0f + exp(-v));
  if (op == 4) return v * fmax(fmin(v / 6.0f + 0.5f, 1.0f), 0.0f);
  if (op == 6) return fmax(fmin(v * a + b, 1.0f), 0.0f);
  if (op == 7) return erf(v);
  return v;
}

// op of binary_f32: 0 add, 1 mul, 2 div, 3 sub.
inline floatv tsr_binary(floatv a, floatv b, int op) {
  if (op == 0) return a + b;
  if (op == 1) return a * b;
  if (op == 2) return a / b;
  return a - b;
}
inline float tsr_binary1(float a, float b, int op) {
  if (op == 0) return a + b;
  if (op == 1) return a * b;
  if (op == 2) return a / b;
  return a - b;
}

// c4 = (C, H * W, CB, 1) over an NCHW4c buffer whose C is not a multiple of 4: lanes of channels
// >= C stay zero (sigmoid(0) and clip(0) need not be); c4.w == 0 otherwise.
__kernel void unary_f32(__global const float* x, __global float* y, int n, int op, float a,
                        float b, int4 c4) {
  const int i0 = get_global_id(0) * VEC;
  if (i0 >= n) return;
  if (i0 + VEC <= n) {
    floatv r = tsr_unary(TSR_VLOAD(x + i0), op, a, b);
    if (c4.w != 0) {
      const intv i = i0 + TSR_IOTA;
      r = select((floatv)(0.0f), r, ((i >> 2) / c4.y % c4.z) * 4 + (i & 3) < c4.x);
    }
    TSR_VSTORE(r, y + i0);
    return;
  }
  for (int i = i0; i < n; ++i) {
    const bool pad = c4.w != 0 && ((i >> 2) / c4.y % c4.z) * 4 + (i & 3) >= c4.x;
    y[i] = pad ? 0.0f : tsr_unary1(x[i], op, a, b);
  }
}

// y[i] = a[..] (op) b[..] over a 4-D output; dims and strides padded on the left with 1 / 0.
// op: tsr_binary's. The innermost stride is 1 or 0 (broadcast), so VEC outputs within one row
// read one vector (or one splatted float) of each operand.
// act: a fused activation as in common.cl's tsr_activate (0 none, 1 relu, 2 clip, 3 leaky relu);
// the lowering fuses only activations with f(0) == 0, so NCHW4c padding stays zero.
__kernel void binary_f32(__global const float* a, __global const float* b, __global float* y,
                         int4 dims, int4 astr, int4 bstr, int op, int act, float act_a,
                         float act_b) {
  const int i0 = get_global_id(0) * VEC;
  const int n = dims.x * dims.y * dims.z * dims.w;
  if (i0 >= n) return;
  int r = i0;
  const int i3 = r % dims.w; r /= dims.w;
  const int i2 = r % dims.z; r /= dims.z;
  const int i1 = r % dims.y;
  const int i0d = r / dims.y;
  const int ao = i0d * astr.x + i1 * astr.y + i2 * astr.z + i3 * astr.w;
  const int bo = i0d * bstr.x + i1 * bstr.y + i2 * bstr.z + i3 * bstr.w;
  if (i3 + VEC <= dims.w) {
    const floatv va = astr.w != 0 ? TSR_VLOAD(a + ao) : (floatv)(a[ao]);
    const floatv vb = bstr.w != 0 ? TSR_VLOAD(b + bo) : (floatv)(b[bo]);
    const floatv r = tsr_binary(va, vb, op);
    TSR_VSTORE(act == 0 ? r : tsr_unary(r, act - 1, act_a, act_b), y + i0);
    return;
  }
  for (int i = i0; i < n && i < i0 + VEC; ++i) {
    int q = i;
    const int j3 = q % dims.w; q /= dims.w;
    const int j2 = q % dims.z; q /= dims.z;
    const int j1 = q % dims.y;
    const int j0 = q / dims.y;
    const float va = a[j0 * astr.x + j1 * astr.y + j2 * astr.z + j3 * astr.w];
    const float vb = b[j0 * bstr.x + j1 * bstr.y + j2 * bstr.z + j3 * bstr.w];
    const float r = tsr_binary1(va, vb, op);
    y[i] = tsr_activate(r, act, act_a, act_b);
  }
}

// y = x * scale[c] + shift[c] over n floats, inner = H * W. NCHW (LANES 1): c = (i / inner) %
// channels. NCHW4c (LANES 4, channels = CB; scale and shift zero padded to CB * 4, so padded lanes
// stay zero): c = (i / (4 * inner)) % CB * 4 + i % 4.
#if VEC > 1
#define TSR_AFFINE_VECTOR(LANES)                                            \
  if (i0 + VEC <= n && i0 % plane + VEC <= plane) {                         \
    /* A whole vector inside one channel (block) plane. */                  \
    const floatv s = LANES == 1 ? (floatv)(scale[c0]) : TSR_REPEAT4(vload4(c0, scale)); \
    const floatv t = LANES == 1 ? (floatv)(shift[c0]) : TSR_REPEAT4(vload4(c0, shift)); \
    TSR_VSTORE(mad(TSR_VLOAD(x + i0), s, t), y + i0);                       \
    return;                                                                 \
  }
#else
#define TSR_AFFINE_VECTOR(LANES)
#endif
#define TSR_CHANNEL_AFFINE(NAME, LANES)                                                       \
  __kernel void NAME(__global const float* x, __global const float* scale,                   \
                     __global const float* shift, __global float* y, int n, int channels,    \
                     int inner) {                                                             \
    const int i0 = get_global_id(0) * VEC;                                                    \
    if (i0 >= n) return;                                                                      \
    const int plane = inner * LANES;                                                          \
    const int c0 = (i0 / plane) % channels;                                                   \
    TSR_AFFINE_VECTOR(LANES)                                                                  \
    for (int i = i0; i < n && i < i0 + VEC; ++i) {                                            \
      const int c = (i / plane) % channels * LANES + i % LANES;                               \
      y[i] = mad(x[i], scale[c], shift[c]);                                                   \
    }                                                                                         \
  }
TSR_CHANNEL_AFFINE(channel_affine_f32, 1)
TSR_CHANNEL_AFFINE(channel_affine_4c_f32, 4)

// dst[o * dst_inner + dst_offset + j] = src[o * src_inner + j] for j < src_inner.
__kernel void copy_block_f32(__global const float* src, __global float* dst, int outer,
                             int src_inner, int dst_inner, int dst_offset) {
  const int i0 = get_global_id(0) * VEC;
  if (i0 >= outer * src_inner) return;
  const int o = i0 / src_inner;
  const int j = i0 - o * src_inner;
  if (j + VEC <= src_inner) {
    TSR_VSTORE(TSR_VLOAD(src + i0), dst + o * dst_inner + dst_offset + j);
    return;
  }
  for (int i = i0; i < outer * src_inner && i < i0 + VEC; ++i) {
    const int oi = i / src_inner;
    dst[oi * dst_inner + dst_offset + i - oi * src_inner] = src[i];
  }
}
