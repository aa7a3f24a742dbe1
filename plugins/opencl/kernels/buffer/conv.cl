// 2-D convolution. The *_f32 kernels work on NCHW float buffers (the general direct one, which
// the image plugins also run, is common/conv_direct.cl), the *_4c kernels (end of file) on
// NCHW4c (see layout.cl). Every kernel's loop over input channels (channel blocks in NCHW4c;
// kernel rows in the depthwise kernels, which have none) runs through TSR_FOR_UNROLLED
// (common.cl), unrolled by the build-time knob "unroll"; the loop bodies are macros for that.
//
// NCHW: each work-item computes OPW (build-time knob
// "outputs_per_item") consecutive output columns of one output row of one (n, m) plane.
// Global range: (ceil(OW / OPW), OH, N * M). Bias and a following activation are fused.
//   in = (N, C, H, W), out = (N, M, OH, OW), kp = (KH, KW, group, has_bias),
//   sp = (stride_h, stride_w, pad_h, pad_w), dl = (dil_h, dil_w, act, 0).
#ifndef OPW
#define OPW 1
#endif

// 1x1, stride 1, no padding, group 1: a per-pixel matrix product over channels; OPW adjacent
// pixels of the flattened plane share each weight load.
__kernel void conv2d_1x1_f32(__global const float* x, __global const float* w,
                             __global const float* bias, __global float* y, int4 in, int4 out,
                             int4 kp, int4 sp, int4 dl, float act_a, float act_b) {
  const int plane = in.z * in.w;
  const int p0 = get_global_id(0) * OPW;
  const int nm = get_global_id(2);
  if (p0 >= plane || nm >= out.x * out.y) return;
  const int m = nm % out.y;
  const int n = nm / out.y;
  float acc[OPW];
  const float b0 = kp.w ? bias[m] : 0.0f;
  for (int j = 0; j < OPW; ++j) acc[j] = b0;
  __global const float* xp = x + n * in.y * plane + p0;
  __global const float* wp = w + m * in.y;
#define TSR_1X1_CHANNEL(c)                                          \
  {                                                                 \
    const float wv = wp[c];                                         \
    for (int j = 0; j < OPW; ++j) {                                 \
      if (p0 + j < plane) acc[j] += wv * xp[(c) * plane + j];       \
    }                                                               \
  }
  TSR_FOR_UNROLLED(in.y, TSR_1X1_CHANNEL)
  __global float* yp = y + nm * plane + p0;
  for (int j = 0; j < OPW; ++j) {
    if (p0 + j < plane) yp[j] = tsr_activate(acc[j], dl.z, act_a, act_b);
  }
}

// One kernel row `ky` of a depthwise kernel (both layouts: float or float4 lane-wise products)
// into acc[OPW]; uses the kernel's xp, wp, oy, ox0 and geometry.
#define TSR_DEPTHWISE_ROW(ky)                                                              \
  {                                                                                        \
    const int iy = oy * sp.x - sp.z + (ky) * dl.x;                                         \
    if (iy >= 0 && iy < in.z) {                                                            \
      for (int kx = 0; kx < kp.y; ++kx) {                                                  \
        for (int j = 0; j < OPW; ++j) {                                                    \
          const int ix = (ox0 + j) * sp.y - sp.w + kx * dl.y;                              \
          if (ix >= 0 && ix < in.w) {                                                      \
            acc[j] = mad(xp[iy * in.w + ix], wp[(ky) * kp.y + kx], acc[j]);                \
          }                                                                                \
        }                                                                                  \
      }                                                                                    \
    }                                                                                      \
  }

// Depthwise (group == C == M): one input channel per output channel.
__kernel void conv2d_depthwise_f32(__global const float* x, __global const float* w,
                                   __global const float* bias, __global float* y, int4 in,
                                   int4 out, int4 kp, int4 sp, int4 dl, float act_a,
                                   float act_b) {
  const int ox0 = get_global_id(0) * OPW;
  const int oy = get_global_id(1);
  const int nm = get_global_id(2);
  if (ox0 >= out.w || oy >= out.z || nm >= out.x * out.y) return;
  const int m = nm % out.y;
  float acc[OPW];
  const float b0 = kp.w ? bias[m] : 0.0f;
  for (int j = 0; j < OPW; ++j) acc[j] = b0;
  __global const float* xp = x + nm * in.z * in.w;
  __global const float* wp = w + m * kp.x * kp.y;
  // No channel loop here: UNROLL applies to the kernel rows.
  TSR_FOR_UNROLLED(kp.x, TSR_DEPTHWISE_ROW)
  __global float* yp = y + ((nm * out.z) + oy) * out.w;
  for (int j = 0; j < OPW; ++j) {
    if (ox0 + j < out.w) yp[ox0 + j] = tsr_activate(acc[j], dl.z, act_a, act_b);
  }
}

// ---- NCHW4c ----
// Each work-item computes one float4 of output channels (block mb) for OPW output pixels, so every
// input float4 it loads feeds 16 multiply-adds. Weights are repacked on the host (ops/
// conv_nchw4c.cpp) as [MB][CBW][KH][KW][4 in][4 out]: for one (input block, tap) the four float4
// of output channels, one per input lane, are 64 contiguous bytes, and the update is four
// scalar-times-vector mads into a float4 accumulator. CBW is the number of input blocks one output
// block reads: its first one is cb0 = (mb * 4 / gp.x) * gp.y (group-aligned convs read only their
// group's blocks; other group counts read all blocks with zero weights outside the group).
// Bias is always given (zero padded to MB * 4). Output lanes of channels >= M are kept zero.
//   in = (N, CB, H, W), out = (N, MB, OH, OW), kp = (KH, KW, CBW, M),
//   sp = (stride_h, stride_w, pad_h, pad_w), dl = (dil_h, dil_w, act, 0), gp = (gm, gc, 0, 0).

inline float4 tsr_mad4(float4 v, __global const float4* w, float4 acc) {
  return mad((float4)(v.x), w[0],
             mad((float4)(v.y), w[1], mad((float4)(v.z), w[2], mad((float4)(v.w), w[3], acc))));
}

inline void tsr_store4(__global float4* yp, const float4* acc, int ox0, int width, int mb,
                       int channels, int act, float a, float b) {
  for (int j = 0; j < OPW; ++j) {
    if (ox0 + j < width) {
      yp[ox0 + j] = tsr_mask4(tsr_activate4(acc[j], act, a, b), mb * 4, channels);
    }
  }
}

// General direct convolution: groups, strides, pads, dilations.
// Global range (ceil(OW / OPW), OH, N * MB).
__kernel void conv2d_direct_4c(__global const float4* x, __global const float4* w,
                               __global const float4* bias, __global float4* y, int4 in, int4 out,
                               int4 kp, int4 sp, int4 dl, int4 gp, float act_a, float act_b) {
  const int ox0 = get_global_id(0) * OPW;
  const int oy = get_global_id(1);
  const int nm = get_global_id(2);
  if (ox0 >= out.w || oy >= out.z || nm >= out.x * out.y) return;
  const int mb = nm % out.y;
  const int n = nm / out.y;
  const int cb0 = (mb * 4 / gp.x) * gp.y;
  float4 acc[OPW];
  for (int j = 0; j < OPW; ++j) acc[j] = bias[mb];
#define TSR_DIRECT_BLOCK(cb)                                                              \
  {                                                                                       \
    __global const float4* xp = x + (n * in.y + cb0 + (cb)) * in.z * in.w;                \
    __global const float4* wp = w + (mb * kp.z + (cb)) * kp.x * kp.y * 4;                 \
    for (int ky = 0; ky < kp.x; ++ky) {                                                   \
      const int iy = oy * sp.x - sp.z + ky * dl.x;                                        \
      if (iy < 0 || iy >= in.z) continue;                                                 \
      for (int kx = 0; kx < kp.y; ++kx) {                                                 \
        __global const float4* wt = wp + (ky * kp.y + kx) * 4;                            \
        for (int j = 0; j < OPW; ++j) {                                                   \
          const int ix = (ox0 + j) * sp.y - sp.w + kx * dl.y;                             \
          if (ix >= 0 && ix < in.w) acc[j] = tsr_mad4(xp[iy * in.w + ix], wt, acc[j]);   \
        }                                                                                 \
      }                                                                                   \
    }                                                                                     \
  }
  TSR_FOR_UNROLLED(kp.z, TSR_DIRECT_BLOCK)
  tsr_store4(y + (nm * out.z + oy) * out.w, acc, ox0, out.w, mb, kp.w, dl.z, act_a, act_b);
}

// 1x1, stride 1, no padding, group 1: OPW adjacent pixels of the flattened plane times
// BLOCKS_PER_ITEM output blocks, so each input float4 loaded feeds BLOCKS_PER_ITEM * 16 mads.
// Weights and bias are zero padded to a whole number of BLOCKS_PER_ITEM groups of blocks.
// Global range (ceil(H * W / OPW), 1, N * ceil(MB / BLOCKS_PER_ITEM)).
#ifndef BLOCKS_PER_ITEM
#define BLOCKS_PER_ITEM 1
#endif
__kernel void conv2d_1x1_4c(__global const float4* x, __global const float4* w,
                            __global const float4* bias, __global float4* y, int4 in, int4 out,
                            int4 kp, int4 sp, int4 dl, int4 gp, float act_a, float act_b) {
  const int plane = in.z * in.w;
  const int groups = (out.y + BLOCKS_PER_ITEM - 1) / BLOCKS_PER_ITEM;
  const int p0 = get_global_id(0) * OPW;
  const int ng = get_global_id(2);
  if (p0 >= plane || ng >= out.x * groups) return;
  const int mb0 = (ng % groups) * BLOCKS_PER_ITEM;
  const int n = ng / groups;
  float4 acc[BLOCKS_PER_ITEM][OPW];
  for (int b = 0; b < BLOCKS_PER_ITEM; ++b) {
    for (int j = 0; j < OPW; ++j) acc[b][j] = bias[mb0 + b];
  }
  __global const float4* xp = x + n * in.y * plane + p0;
  __global const float4* wp = w + mb0 * in.y * 4;
  const bool whole = p0 + OPW <= plane;
#define TSR_1X1_BLOCK(cb)                                                 \
  {                                                                       \
    for (int j = 0; j < OPW; ++j) {                                       \
      if (!whole && p0 + j >= plane) break;                               \
      const float4 v = xp[(cb) * plane + j];                              \
      for (int b = 0; b < BLOCKS_PER_ITEM; ++b) {                         \
        acc[b][j] = tsr_mad4(v, wp + (b * in.y + (cb)) * 4, acc[b][j]);   \
      }                                                                   \
    }                                                                     \
  }
  TSR_FOR_UNROLLED(in.y, TSR_1X1_BLOCK)
  for (int b = 0; b < BLOCKS_PER_ITEM; ++b) {
    if (mb0 + b < out.y) {
      tsr_store4(y + (n * out.y + mb0 + b) * plane, acc[b], p0, plane, mb0 + b, kp.w, dl.z,
                 act_a, act_b);
    }
  }
}

// Depthwise (group == C == M): lane-wise products; weights packed [CB][KH][KW] float4.
// Global range (ceil(OW / OPW), OH, N * CB).
__kernel void conv2d_depthwise_4c(__global const float4* x, __global const float4* w,
                                  __global const float4* bias, __global float4* y, int4 in,
                                  int4 out, int4 kp, int4 sp, int4 dl, int4 gp, float act_a,
                                  float act_b) {
  const int ox0 = get_global_id(0) * OPW;
  const int oy = get_global_id(1);
  const int nm = get_global_id(2);
  if (ox0 >= out.w || oy >= out.z || nm >= out.x * out.y) return;
  const int mb = nm % out.y;
  float4 acc[OPW];
  for (int j = 0; j < OPW; ++j) acc[j] = bias[mb];
  __global const float4* xp = x + nm * in.z * in.w;
  __global const float4* wp = w + mb * kp.x * kp.y;
  // No channel loop here: UNROLL applies to the kernel rows.
  TSR_FOR_UNROLLED(kp.x, TSR_DEPTHWISE_ROW)
  tsr_store4(y + (nm * out.z + oy) * out.w, acc, ox0, out.w, mb, kp.w, dl.z, act_a, act_b);
}

// 3x3, stride 1, dilation 1, group 1: register tiling. A work-item owns ROWS_PER_ITEM output
// rows x OPW output columns x 4 output channels; it loads each input row segment it needs once
// (OPW + 2 float4, zero outside the image) and reuses every loaded float4 for the 3 kernel
// columns, every output column and (ROWS_PER_ITEM > 1) every output row it touches. Both are
// build-time knobs so the loops unroll and the tile stays in registers.
// Global range (ceil(OW / OPW), ceil(OH / ROWS_PER_ITEM), N * MB).
#ifndef ROWS_PER_ITEM
#define ROWS_PER_ITEM 1
#endif
__kernel void conv2d_3x3s1_4c(__global const float4* x, __global const float4* w,
                              __global const float4* bias, __global float4* y, int4 in, int4 out,
                              int4 kp, int4 sp, int4 dl, int4 gp, float act_a, float act_b) {
  const int ox0 = get_global_id(0) * OPW;
  const int oy0 = get_global_id(1) * ROWS_PER_ITEM;
  const int nm = get_global_id(2);
  if (ox0 >= out.w || oy0 >= out.z || nm >= out.x * out.y) return;
  const int mb = nm % out.y;
  const int n = nm / out.y;
  float4 acc[ROWS_PER_ITEM][OPW];
  const float4 b0 = bias[mb];
  for (int r = 0; r < ROWS_PER_ITEM; ++r) {
    for (int j = 0; j < OPW; ++j) acc[r][j] = b0;
  }
  const int ix0 = ox0 - sp.w;
#define TSR_3X3_BLOCK(cb)                                                                  \
  {                                                                                        \
    __global const float4* xp = x + (n * in.y + (cb)) * in.z * in.w;                       \
    __global const float4* wp = w + (mb * in.y + (cb)) * 36;                               \
    for (int t = 0; t < ROWS_PER_ITEM + 2; ++t) {                                          \
      const int iy = oy0 - sp.z + t;                                                       \
      if (iy < 0 || iy >= in.z) continue;                                                  \
      float4 row[OPW + 2];                                                                 \
      for (int j = 0; j < OPW + 2; ++j) {                                                  \
        const int ix = ix0 + j;                                                            \
        row[j] = (ix >= 0 && ix < in.w) ? xp[iy * in.w + ix] : (float4)(0.0f);             \
      }                                                                                    \
      for (int r = 0; r < ROWS_PER_ITEM; ++r) {                                            \
        const int ky = t - r;                                                              \
        if (ky < 0 || ky > 2) continue;                                                    \
        for (int kx = 0; kx < 3; ++kx) {                                                   \
          __global const float4* wt = wp + (ky * 3 + kx) * 4;                              \
          for (int j = 0; j < OPW; ++j) acc[r][j] = tsr_mad4(row[j + kx], wt, acc[r][j]);  \
        }                                                                                  \
      }                                                                                    \
    }                                                                                      \
  }
  TSR_FOR_UNROLLED(in.y, TSR_3X3_BLOCK)
  for (int r = 0; r < ROWS_PER_ITEM; ++r) {
    if (oy0 + r < out.z) {
      tsr_store4(y + (nm * out.z + oy0 + r) * out.w, acc[r], ox0, out.w, mb, kp.w, dl.z, act_a,
                 act_b);
    }
  }
}

// Implicit GEMM for every group-1 convolution (any kernel, stride, padding, dilation): output
// channels x output pixels, reduced over (input block, kernel row, kernel column). A work-item
// holds a register tile of BLOCKS_PER_ITEM output blocks (4 channels each) x OPW output pixels of
// the flattened plane: each input float4 it loads feeds BLOCKS_PER_ITEM * 16 mads and each weight
// float4 OPW * 4. The reduction is split over the work-group's dimension 2 (k_split work-items,
// input blocks interleaved between them): slices 1.. leave their tiles in `part` (__local,
// (k_split - 1) * local_size(0) * BLOCKS_PER_ITEM * OPW float4) and slice 0 sums them
// (tsr_split_sum4, helpers.cl) and stores. Arguments as conv2d_direct_4c's (gp unused: group 1).
// A late layer with a 7x7 plane and 512 channels
// has too few output tiles to fill a large GPU, but K = 4608 has parallelism to spare.
// Weights are packed as for conv2d_direct_4c with every input block ([MB][CB][KH][KW][4][4],
// MB padded to whole BLOCKS_PER_ITEM groups), bias to the same length.
// Global range (ceil(OH * OW / OPW), N * ceil(MB / BLOCKS_PER_ITEM), k_split), local
// (lx, 1, k_split).
__kernel void conv2d_gemm_4c(__global const float4* x, __global const float4* w,
                             __global const float4* bias, __global float4* y, int4 in, int4 out,
                             int4 kp, int4 sp, int4 dl, int4 gp, float act_a, float act_b,
                             __local float4* part) {
  // No early return: every work-item reaches the barrier in tsr_split_sum4.
  TSR_SPLIT_GEMM_PROLOGUE(out, sp)
  if (live) {
    const int taps = kp.x * kp.y;
    const int block_stride = in.y * taps * 4;  // float4 between two output blocks' weights
    for (int cb = kz; cb < in.y; cb += ks) {
      __global const float4* xp = x + (n * in.y + cb) * in.z * in.w;
      __global const float4* wp = w + (mb0 * in.y + cb) * taps * 4;
      for (int ky = 0; ky < kp.x; ++ky) {
        for (int kx = 0; kx < kp.y; ++kx) {
          float4 v[OPW];
          for (int j = 0; j < OPW; ++j) {
            const int iy = iy0[j] + ky * dl.x;
            const int ix = ix0[j] + kx * dl.y;
            v[j] = (iy >= 0 && iy < in.z && ix >= 0 && ix < in.w) ? xp[iy * in.w + ix]
                                                                  : (float4)(0.0f);
          }
          __global const float4* wt = wp + (ky * kp.y + kx) * 4;
          for (int b = 0; b < BLOCKS_PER_ITEM; ++b) {
            for (int j = 0; j < OPW; ++j) {
              acc[b][j] = tsr_mad4(v[j], wt + b * block_stride, acc[b][j]);
            }
          }
        }
      }
    }
  }
  if (!tsr_split_sum4(&acc[0][0], BLOCKS_PER_ITEM * OPW, part) || !live) return;
  for (int b = 0; b < BLOCKS_PER_ITEM; ++b) {
    const int mb = mb0 + b;
    if (mb >= out.y) break;
    const float4 bv = bias[mb];
    for (int j = 0; j < OPW; ++j) acc[b][j] += bv;
    tsr_store4(y + (n * out.y + mb) * plane, acc[b], p0, plane, mb, kp.w, dl.z, act_a, act_b);
  }
}
