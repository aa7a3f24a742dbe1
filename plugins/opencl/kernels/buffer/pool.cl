// Pooling on NCHW float buffers (T = float, one work-item per output element) and on NCHW4c
// buffers (T = float4, one work-item per output float4: four channels of one pixel; see
// layout.cl). Both kernels come from one definition; for NCHW4c the channel dims count blocks,
// and zero padded lanes pool to zero.
//   in = (N, C, H, W), out = (N, C, OH, OW), k = (KH, KW, mode (0 max, 1 avg), count_include_pad),
//   sp = (stride_h, stride_w, pad_top, pad_left), ex = (dil_h, dil_w, pad_bottom, pad_right).
#define TSR_POOL2D(NAME, T)                                                                     \
  __kernel void NAME(__global const T* x, __global T* y, int4 in, int4 out, int4 k, int4 sp,   \
                     int4 ex) {                                                                 \
    const int i = get_global_id(0);                                                             \
    const int total = out.x * out.y * out.z * out.w;                                            \
    if (i >= total) return;                                                                     \
    const int ox = i % out.w;                                                                   \
    const int oy = (i / out.w) % out.z;                                                         \
    const int plane = i / (out.w * out.z);                                                      \
    __global const T* xp = x + plane * in.z * in.w;                                             \
    T best = (T)(-INFINITY);                                                                    \
    T sum = (T)(0.0f);                                                                          \
    int count = 0;                                                                              \
    for (int ky = 0; ky < k.x; ++ky) {                                                          \
      const int iy = oy * sp.x - sp.z + ky * ex.x;                                              \
      const bool row_in = iy >= 0 && iy < in.z;                                                 \
      const bool row_padded = iy >= -sp.z && iy < in.z + ex.z;                                  \
      for (int kx = 0; kx < k.y; ++kx) {                                                        \
        const int ix = ox * sp.y - sp.w + kx * ex.y;                                            \
        const bool inside = row_in && ix >= 0 && ix < in.w;                                     \
        if (inside) {                                                                           \
          const T v = xp[iy * in.w + ix];                                                       \
          best = fmax(best, v);                                                                 \
          sum += v;                                                                             \
        }                                                                                       \
        const bool padded = row_padded && ix >= -sp.w && ix < in.w + ex.w;                      \
        if (k.w ? padded : inside) ++count;                                                     \
      }                                                                                         \
    }                                                                                           \
    y[i] = k.z == 0 ? best : (count == 0 ? (T)(0.0f) : sum / (float)count);                     \
  }
TSR_POOL2D(pool2d_f32, float)
TSR_POOL2D(pool2d_4c_f32, float4)

// y[r] = mean of plane r: rows = N * C planes of `inner` floats (NCHW, LANES 1) or N * CB block
// planes of `inner` float4 (NCHW4c, LANES 4; the [N, C, 1, 1] output is byte-identical to NCHW
// when C % 4 == 0). The plane is summed VEC floats (build-time knob "vec") per vector load, the
// vector folded to T, and what is left of the plane added one T at a time.
#if VEC == 1
#define TSR_FOLD1(a) (a)
#define TSR_FOLD4(a) ((float4)(a)) /* unused: LANES 4 never takes VEC 1 loads */
#elif VEC == 4
#define TSR_FOLD4(a) (a)
#elif VEC == 8
#define TSR_FOLD4(a) ((a).lo + (a).hi)
#else
#define TSR_FOLD4(a) (((a).lo.lo + (a).lo.hi) + ((a).hi.lo + (a).hi.hi))
#endif
#if VEC > 1
#define TSR_FOLD1(a) (TSR_FOLD4(a).x + TSR_FOLD4(a).y + TSR_FOLD4(a).z + TSR_FOLD4(a).w)
#endif
#define TSR_GLOBAL_AVG(NAME, T, LANES, FOLD, LOAD)                                        \
  __kernel void NAME(__global const float* x, __global T* y, int rows, int inner) {      \
    const int r = get_global_id(0);                                                      \
    if (r >= rows) return;                                                               \
    const int len = inner * LANES;                                                       \
    __global const float* xp = x + r * len;                                              \
    floatv acc = (floatv)(0.0f);                                                         \
    int j = 0;                                                                           \
    for (; VEC >= LANES && j + VEC <= len; j += VEC) acc += TSR_VLOAD(xp + j);           \
    T sum = FOLD(acc);                                                                   \
    for (; j < len; j += LANES) sum += LOAD(xp + j);                                     \
    y[r] = sum / (float)inner;                                                           \
  }
#define TSR_LOAD1(p) (*(p))
#define TSR_LOAD4(p) vload4(0, p)
TSR_GLOBAL_AVG(global_avg_pool_f32, float, 1, TSR_FOLD1, TSR_LOAD1)
TSR_GLOBAL_AVG(global_avg_pool_4c_f32, float4, 4, TSR_FOLD4, TSR_LOAD4)

// Bilinear resize over H and W of an NCHW tensor, one work-item per output element. in = (N, C,
// H, W); mode as tsr_bilinear's (helpers.cl).
__kernel void resize_bilinear_f32(__global const float* x, __global float* y, int4 in, int out_h,
                                  int out_w, int mode) {
  const int i = get_global_id(0);
  if (i >= in.x * in.y * out_h * out_w) return;
  const int ow = i % out_w, oh = (i / out_w) % out_h, nc = i / (out_w * out_h);
  const tsr_bilinear_taps t = tsr_bilinear(oh, ow, in.z, in.w, out_h, out_w, mode);
  const int y0 = t.y0, y1 = t.y1, x0 = t.x0, x1 = t.x1;
  const float fy = t.fy, fx = t.fx;
  const __global float* p = x + (size_t)nc * in.z * in.w;
  const float top = p[y0 * in.w + x0] + (p[y0 * in.w + x1] - p[y0 * in.w + x0]) * fx;
  const float bottom = p[y1 * in.w + x0] + (p[y1 * in.w + x1] - p[y1 * in.w + x0]) * fx;
  y[i] = top + (bottom - top) * fy;
}
