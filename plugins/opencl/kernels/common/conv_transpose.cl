// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).

// ConvTranspose (1-D as H = 1, and 2-D) on NCHW buffers, one output element per work-item: the
// gather form of the scatter ONNX describes. Output (oh, ow) takes input (ih, iw) through tap
// (kh, kw) where oh + pad_h - kh * dil_h = ih * stride_h, so each tap either divides evenly or
// contributes nothing. Weights are (C, M / group, KH, KW); xd (N, C, H, W); yd (N, M, OH, OW);
// kd (KH, KW, group, has_bias); sd (stride_h, stride_w, dil_h, dil_w); pd.xy the begin pads
// (negative when output_shape asks for more than the taps reach).
__kernel void conv_transpose_f32(__global const float* x, __global const float* w,
                                 __global const float* b, __global float* y, int4 xd, int4 yd,
                                 int4 kd, int4 sd, int4 pd) {
  const int i = get_global_id(0);
  if (i >= yd.x * yd.y * yd.z * yd.w) return;
  const int ow = i % yd.w, oh = (i / yd.w) % yd.z, m = (i / (yd.w * yd.z)) % yd.y;
  const int n = i / (yd.w * yd.z * yd.y);
  const int m_per_group = yd.y / kd.z, c_per_group = xd.y / kd.z;
  const int g = m / m_per_group, mg = m % m_per_group;
  float acc = kd.w ? b[m] : 0.0f;
  for (int c = 0; c < c_per_group; ++c) {
    const int ci = g * c_per_group + c;
    __global const float* xc = x + ((size_t)n * xd.y + ci) * xd.z * xd.w;
    __global const float* wc = w + ((size_t)ci * m_per_group + mg) * kd.x * kd.y;
    for (int kh = 0; kh < kd.x; ++kh) {
      const int th = oh + pd.x - kh * sd.z;
      if (th < 0 || th % sd.x != 0) continue;
      const int ih = th / sd.x;
      if (ih >= xd.z) continue;
      for (int kw = 0; kw < kd.y; ++kw) {
        const int tw = ow + pd.y - kw * sd.w;
        if (tw < 0 || tw % sd.y != 0) continue;
        const int iw = tw / sd.y;
        if (iw >= xd.w) continue;
        acc += xc[ih * xd.w + iw] * wc[kh * kd.y + kw];
      }
    }
  }
  y[i] = acc;
}
