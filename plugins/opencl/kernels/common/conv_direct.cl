// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// The general direct 2-D convolution on NCHW float buffers (groups, strides, pads, dilations; a
// 1-D conv runs it with height 1): mali's NCHW fallback schedule, and the buffer conv of the
// image plugins where their own kernels do not take the shape. Each work-item computes OPW
// (build-time knob "outputs_per_item") consecutive output columns of one output row of one
// (n, m) plane; the loop over input channels runs through TSR_FOR_UNROLLED (helpers.cl,
// knob "unroll"). Global range: (ceil(OW / OPW), OH, N * M). Bias and a following activation
// are fused.
//   in = (N, C, H, W), out = (N, M, OH, OW), kp = (KH, KW, group, has_bias),
//   sp = (stride_h, stride_w, pad_h, pad_w), dl = (dil_h, dil_w, act, 0).
#ifndef OPW
#define OPW 1
#endif

__kernel void conv2d_direct_f32(__global const float* x, __global const float* w,
                                __global const float* bias, __global float* y, int4 in,
                                int4 out, int4 kp, int4 sp, int4 dl, float act_a, float act_b) {
  const int ox0 = get_global_id(0) * OPW;
  const int oy = get_global_id(1);
  const int nm = get_global_id(2);
  if (ox0 >= out.w || oy >= out.z || nm >= out.x * out.y) return;
  const int m = nm % out.y;
  const int n = nm / out.y;
  const int cpg = in.y / kp.z;            // input channels per group
  const int mpg = out.y / kp.z;           // output channels per group
  const int c0 = (m / mpg) * cpg;
  float acc[OPW];
  const float b0 = kp.w ? bias[m] : 0.0f;
  for (int j = 0; j < OPW; ++j) acc[j] = b0;
#define TSR_DIRECT_CHANNEL(c)                                            \
  {                                                                      \
    __global const float* xp = x + ((n * in.y + c0 + (c)) * in.z) * in.w; \
    __global const float* wp = w + ((m * cpg + (c)) * kp.x) * kp.y;      \
    for (int ky = 0; ky < kp.x; ++ky) {                                  \
      const int iy = oy * sp.x - sp.z + ky * dl.x;                       \
      if (iy < 0 || iy >= in.z) continue;                                \
      for (int kx = 0; kx < kp.y; ++kx) {                                \
        const float wv = wp[ky * kp.y + kx];                             \
        for (int j = 0; j < OPW; ++j) {                                  \
          const int ix = (ox0 + j) * sp.y - sp.w + kx * dl.y;            \
          if (ix >= 0 && ix < in.w) acc[j] += wv * xp[iy * in.w + ix];   \
        }                                                                \
      }                                                                  \
    }                                                                    \
  }
  TSR_FOR_UNROLLED(cpg, TSR_DIRECT_CHANNEL)
  __global float* yp = y + ((nm * out.z) + oy) * out.w;
  for (int j = 0; j < OPW; ++j) {
    if (ox0 + j < out.w) yp[ox0 + j] = tsr_activate(acc[j], dl.z, act_a, act_b);
  }
}
