// Conv on texture-layout tensors. Work-items: (ceil(OW / OPW), N * OH, M4); each computes OPW
// horizontally adjacent output texels (4 output channels each) so a weight texel read is reused
// OPW times. bias: one float4 per output block (zeros when the node has none).
//   in = (N, C4, H, W), out = (N, M4, OH, OW), k = (KH, KW, Cg, Mg) (per-group in/out channels),
//   sp = (stride_h, stride_w, pad_top, pad_left), dl = (dil_h, dil_w, C, M).

#define CONV_PROLOGUE                                                     \
  const int ox0 = get_global_id(0) * OPW, ny = get_global_id(1);         \
  const int m4 = get_global_id(2);                                        \
  if (ox0 >= out.w || ny >= out.x * out.z || m4 >= out.y) return;         \
  const int n = ny / out.z, oy = ny % out.z;                              \
  float4 acc[OPW];                                                        \
  for (int o = 0; o < OPW; ++o) acc[o] = bias[m4];

#define CONV_EPILOGUE                                                                 \
  for (int o = 0; o < OPW; ++o) {                                                     \
    if (ox0 + o < out.w) {                                                            \
      write_imagef(y, (int2)(m4 * out.w + ox0 + o, n * out.z + oy), acc[o]);          \
    }                                                                                 \
  }

// group == 1. Weight image: texel ((ky * KW + kx) * C4 * 4 + c, m4) holds w[m4*4 + 0..3][c][ky][kx].
__kernel void conv2d_direct_image(__read_only image2d_t x, __read_only image2d_t wt,
                                  __global const float4* bias, __write_only image2d_t y, int4 in,
                                  int4 out, int4 k, int4 sp, int4 dl) {
  CONV_PROLOGUE
  for (int ky = 0; ky < k.x; ++ky) {
    const int iy = oy * sp.x - sp.z + ky * dl.x;
    if (iy < 0 || iy >= in.z) continue;
    const int row = n * in.z + iy;
    for (int kx = 0; kx < k.y; ++kx) {
      const int wbase = (ky * k.y + kx) * in.y * 4;
      for (int c4 = 0; c4 < in.y; ++c4) {
        const float4 w0 = read_imagef(wt, kSampler, (int2)(wbase + c4 * 4 + 0, m4));
        const float4 w1 = read_imagef(wt, kSampler, (int2)(wbase + c4 * 4 + 1, m4));
        const float4 w2 = read_imagef(wt, kSampler, (int2)(wbase + c4 * 4 + 2, m4));
        const float4 w3 = read_imagef(wt, kSampler, (int2)(wbase + c4 * 4 + 3, m4));
        for (int o = 0; o < OPW; ++o) {
          const int ix = (ox0 + o) * sp.y - sp.w + kx * dl.y;
          if (ox0 + o >= out.w || ix < 0 || ix >= in.w) continue;
          const float4 v = read_imagef(x, kSampler, (int2)(c4 * in.w + ix, row));
          acc[o] += v.x * w0 + v.y * w1 + v.z * w2 + v.w * w3;
        }
      }
    }
  }
  CONV_EPILOGUE
}

// group == 1, 1x1 kernel, stride 1, no pads: same weight image as the direct kernel.
__kernel void conv2d_1x1_image(__read_only image2d_t x, __read_only image2d_t wt,
                               __global const float4* bias, __write_only image2d_t y, int4 in,
                               int4 out, int4 k, int4 sp, int4 dl) {
  CONV_PROLOGUE
  const int row = n * in.z + oy;
  for (int c4 = 0; c4 < in.y; ++c4) {
    const float4 w0 = read_imagef(wt, kSampler, (int2)(c4 * 4 + 0, m4));
    const float4 w1 = read_imagef(wt, kSampler, (int2)(c4 * 4 + 1, m4));
    const float4 w2 = read_imagef(wt, kSampler, (int2)(c4 * 4 + 2, m4));
    const float4 w3 = read_imagef(wt, kSampler, (int2)(c4 * 4 + 3, m4));
    for (int o = 0; o < OPW; ++o) {
      if (ox0 + o >= out.w) continue;
      const float4 v = read_imagef(x, kSampler, (int2)(c4 * in.w + ox0 + o, row));
      acc[o] += v.x * w0 + v.y * w1 + v.z * w2 + v.w * w3;
    }
  }
  CONV_EPILOGUE
}

// group == C == M: output channel m reads input channel m, so a texel pairs with a texel.
// Weight image: texel (ky * KW + kx, m4) holds w[m4*4 + 0..3][0][ky][kx].
__kernel void conv2d_depthwise_image(__read_only image2d_t x, __read_only image2d_t wt,
                                     __global const float4* bias, __write_only image2d_t y,
                                     int4 in, int4 out, int4 k, int4 sp, int4 dl) {
  CONV_PROLOGUE
  for (int ky = 0; ky < k.x; ++ky) {
    const int iy = oy * sp.x - sp.z + ky * dl.x;
    if (iy < 0 || iy >= in.z) continue;
    const int row = n * in.z + iy;
    for (int kx = 0; kx < k.y; ++kx) {
      const float4 w = read_imagef(wt, kSampler, (int2)(ky * k.y + kx, m4));
      for (int o = 0; o < OPW; ++o) {
        const int ix = (ox0 + o) * sp.y - sp.w + kx * dl.y;
        if (ox0 + o >= out.w || ix < 0 || ix >= in.w) continue;
        acc[o] += read_imagef(x, kSampler, (int2)(m4 * in.w + ix, row)) * w;
      }
    }
  }
  CONV_EPILOGUE
}

// Any group count: each of the 4 output lanes gathers its own group's input channel.
// Weight image: texel ((ky * KW + kx) * Cg + cg, m4) holds w[m4*4 + 0..3][cg][ky][kx].
__kernel void conv2d_grouped_image(__read_only image2d_t x, __read_only image2d_t wt,
                                   __global const float4* bias, __write_only image2d_t y, int4 in,
                                   int4 out, int4 k, int4 sp, int4 dl) {
  CONV_PROLOGUE
  int cbase[4];
  for (int j = 0; j < 4; ++j) {
    const int m = min(m4 * 4 + j, dl.w - 1);  // padded lanes read a valid channel, weight is 0
    cbase[j] = (m / k.w) * k.z;
  }
  for (int ky = 0; ky < k.x; ++ky) {
    const int iy = oy * sp.x - sp.z + ky * dl.x;
    if (iy < 0 || iy >= in.z) continue;
    const int row = n * in.z + iy;
    for (int kx = 0; kx < k.y; ++kx) {
      for (int cg = 0; cg < k.z; ++cg) {
        const float4 w = read_imagef(wt, kSampler, (int2)((ky * k.y + kx) * k.z + cg, m4));
        for (int o = 0; o < OPW; ++o) {
          const int ix = (ox0 + o) * sp.y - sp.w + kx * dl.y;
          if (ox0 + o >= out.w || ix < 0 || ix >= in.w) continue;
          float v[4];
          for (int j = 0; j < 4; ++j) {
            const int c = cbase[j] + cg;
            v[j] = lane_of(read_imagef(x, kSampler, (int2)((c >> 2) * in.w + ix, row)), c & 3);
          }
          acc[o] += (float4)(v[0], v[1], v[2], v[3]) * w;
        }
      }
    }
  }
  CONV_EPILOGUE
}

// group == 1, any kernel, stride, padding and dilation: implicit GEMM (the texture twin of mali's
// conv2d_gemm_4c). A work-item holds BLOCKS_PER_ITEM output texels x OPW output pixels of the
// flattened plane, so each input texel read feeds BLOCKS_PER_ITEM * 16 mads and each weight
// texel OPW * 4. The reduction over input texels is split over the work-group's dimension 2
// (k_split slices, interleaved); slices 1.. leave their tiles in `part` (__local,
// (k_split - 1) * local_size(0) * BLOCKS_PER_ITEM * OPW float4) for slice 0 to add
// (tsr_split_sum4, helpers.cl) and store.
// Same weight image as conv2d_direct_image.
// Global (ceil(OH * OW / OPW), N * ceil(M4 / BLOCKS_PER_ITEM), k_split), local (lx, 1, k_split).
#ifndef BLOCKS_PER_ITEM
#define BLOCKS_PER_ITEM 1
#endif
__kernel void conv2d_gemm_image(__read_only image2d_t x, __read_only image2d_t wt,
                                __global const float4* bias, __write_only image2d_t y, int4 in,
                                int4 out, int4 k, int4 sp, int4 dl, __local float4* part) {
  // No early return: every work-item reaches the barrier in tsr_split_sum4.
  TSR_SPLIT_GEMM_PROLOGUE(out, sp)
  if (live) {
    for (int c4 = kz; c4 < in.y; c4 += ks) {
      for (int ky = 0; ky < k.x; ++ky) {
        for (int kx = 0; kx < k.y; ++kx) {
          float4 v[OPW];
          for (int j = 0; j < OPW; ++j) {
            const int iy = iy0[j] + ky * dl.x;
            const int ix = ix0[j] + kx * dl.y;
            v[j] = (iy >= 0 && iy < in.z && ix >= 0 && ix < in.w)
                       ? read_imagef(x, kSampler, (int2)(c4 * in.w + ix, n * in.z + iy))
                       : (float4)(0.0f);
          }
          const int wx = (ky * k.y + kx) * in.y * 4 + c4 * 4;
          for (int b = 0; b < BLOCKS_PER_ITEM; ++b) {
            // Blocks past the last are computed on the last one's weights and never stored.
            const int m4 = min(mb0 + b, out.y - 1);
            const float4 w0 = read_imagef(wt, kSampler, (int2)(wx + 0, m4));
            const float4 w1 = read_imagef(wt, kSampler, (int2)(wx + 1, m4));
            const float4 w2 = read_imagef(wt, kSampler, (int2)(wx + 2, m4));
            const float4 w3 = read_imagef(wt, kSampler, (int2)(wx + 3, m4));
            for (int j = 0; j < OPW; ++j) {
              acc[b][j] = mad((float4)(v[j].x), w0,
                              mad((float4)(v[j].y), w1,
                                  mad((float4)(v[j].z), w2, mad((float4)(v[j].w), w3, acc[b][j]))));
            }
          }
        }
      }
    }
  }
  if (!tsr_split_sum4(&acc[0][0], BLOCKS_PER_ITEM * OPW, part) || !live) return;
  for (int b = 0; b < BLOCKS_PER_ITEM; ++b) {
    const int m4 = mb0 + b;
    if (m4 >= out.y) break;
    const float4 bv = bias[m4];
    for (int j = 0; j < OPW; ++j) {
      const int p = p0 + j;
      if (p >= plane) break;
      write_imagef(y, (int2)(m4 * out.w + p % out.w, n * out.z + p / out.w), acc[b][j] + bv);
    }
  }
}
