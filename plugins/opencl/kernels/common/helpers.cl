// Shared by the OpenCL plugins and prepended (after the plugin's common.cl) to every program they
// build: inline helpers only, so a kernel file pays for what it calls.

// Split reductions: a work-group of local_size(0) work-items along the outputs x local_size(2)
// slices of the reduction. tsr_split_sum4 adds the `n` float4 partial sums `acc` of slices 1..
// into slice 0's `acc` through `part` (__local, (local_size(2) - 1) * local_size(0) * n float4).
// Every work-item of the group must call it (it holds a barrier); it returns true for slice 0,
// the work-items that then own the sums.
inline bool tsr_split_sum4(float4* acc, int n, __local float4* part) {
  const int lx = get_local_size(0), lid = get_local_id(0);
  const int ks = get_local_size(2), kz = get_local_id(2);
  if (kz > 0) {
    __local float4* mine = part + ((kz - 1) * lx + lid) * n;
    for (int i = 0; i < n; ++i) mine[i] = acc[i];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (kz > 0) return false;
  for (int z = 1; z < ks; ++z) {
    __local const float4* other = part + ((z - 1) * lx + lid) * n;
    for (int i = 0; i < n; ++i) acc[i] += other[i];
  }
  return true;
}

// The same for one float per work-item.
inline bool tsr_split_sum(float* acc, __local float* part) {
  const int lx = get_local_size(0), lid = get_local_id(0);
  const int ks = get_local_size(2), kz = get_local_id(2);
  if (kz > 0) part[(kz - 1) * lx + lid] = *acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (kz > 0) return false;
  for (int z = 1; z < ks; ++z) *acc += part[(z - 1) * lx + lid];
  return true;
}

// The split-gemm conv kernels' common start (conv2d_gemm_4c, conv2d_gemm_image; OPW and
// BLOCKS_PER_ITEM defined): for `out` = (N, output blocks, OH, OW) and `sp` = (stride y, x, pad
// top, left), the work-item's OPW pixels from p0 of the flattened plane and BLOCKS_PER_ITEM
// output blocks from mb0 of image n (`live` false for the launch's overhang), its reduction
// slice kz of ks, the input coordinates iy0[j], ix0[j] of each pixel's first kernel tap (pixels
// past the plane repeat its last one), and zeroed accumulators acc[BLOCKS_PER_ITEM][OPW].
#define TSR_SPLIT_GEMM_PROLOGUE(out, sp)                                \
  const int plane = (out).z * (out).w;                                  \
  const int groups = ((out).y + BLOCKS_PER_ITEM - 1) / BLOCKS_PER_ITEM; \
  const int p0 = get_global_id(0) * OPW;                                \
  const int ng = get_global_id(1);                                      \
  const int ks = get_local_size(2);                                     \
  const int kz = get_local_id(2);                                       \
  const bool live = p0 < plane && ng < (out).x * groups;                \
  const int mb0 = (ng % groups) * BLOCKS_PER_ITEM;                      \
  const int n = ng / groups;                                            \
  int iy0[OPW], ix0[OPW];                                               \
  for (int j_ = 0; j_ < OPW; ++j_) {                                    \
    const int p_ = min(p0 + j_, plane - 1);                             \
    iy0[j_] = (p_ / (out).w) * (sp).x - (sp).z;                         \
    ix0[j_] = (p_ % (out).w) * (sp).y - (sp).w;                         \
  }                                                                     \
  float4 acc[BLOCKS_PER_ITEM][OPW];                                     \
  for (int b_ = 0; b_ < BLOCKS_PER_ITEM; ++b_) {                        \
    for (int j_ = 0; j_ < OPW; ++j_) acc[b_][j_] = (float4)(0.0f);      \
  }

// Bilinear resize (Resize, mode linear, over H and W): where output pixel (oh, ow) of an
// out_h x out_w plane samples an in_h x in_w one. The two source rows y0, y1 and columns x0, x1 to
// blend and the weights fy, fx of the second. mode 0 asymmetric (x / scale), 1 half-pixel
// centres, 2 align corners.
typedef struct {
  int y0, y1, x0, x1;
  float fy, fx;
} tsr_bilinear_taps;

inline tsr_bilinear_taps tsr_bilinear(int oh, int ow, int in_h, int in_w, int out_h, int out_w,
                                      int mode) {
  float sy, sx;
  if (mode == 2) {
    sy = out_h > 1 ? (float)oh * (float)(in_h - 1) / (float)(out_h - 1) : 0.0f;
    sx = out_w > 1 ? (float)ow * (float)(in_w - 1) / (float)(out_w - 1) : 0.0f;
  } else {
    const float scale_y = (float)out_h / (float)in_h, scale_x = (float)out_w / (float)in_w;
    sy = mode == 1 ? fmax(((float)oh + 0.5f) / scale_y - 0.5f, 0.0f) : (float)oh / scale_y;
    sx = mode == 1 ? fmax(((float)ow + 0.5f) / scale_x - 0.5f, 0.0f) : (float)ow / scale_x;
  }
  tsr_bilinear_taps t;
  t.y0 = min((int)sy, in_h - 1);
  t.x0 = min((int)sx, in_w - 1);
  t.y1 = min(t.y0 + 1, in_h - 1);
  t.x1 = min(t.x0 + 1, in_w - 1);
  t.fy = sy - (float)t.y0;
  t.fx = sx - (float)t.x0;
  return t;
}

// The sum of `v` over the local_size(0) work-items of one row of the work-group (local id 1),
// through `row` (__local, local_size(0) floats, a power of two). Every work-item of the group
// must call it (it holds barriers).
inline float tsr_row_sum(float v, __local float* row) {
  const int t = get_local_id(0);
  row[t] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = get_local_size(0) / 2; step > 0; step /= 2) {
    if (t < step) row[t] += row[t + step];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float sum = row[0];
  barrier(CLK_LOCAL_MEM_FENCE);  // row[] is written again by the next call
  return sum;
}

// The mean of x[0..n) and the sum of squared deviations about it (two passes, so no catastrophic
// cancellation), by the local_size(0) work-items of one row of the work-group through `row`
// (see tsr_row_sum: every work-item of the group must call it). (0, 0) for n = 0.
inline float2 tsr_row_mean_m2(__global const float* x, size_t n, __local float* row) {
  const size_t t = get_local_id(0), threads = get_local_size(0);
  float sum = 0.0f;
  for (size_t j = t; j < n; j += threads) sum += x[j];
  const float total = tsr_row_sum(sum, row);
  const float mean = n > 0 ? total / (float)n : 0.0f;
  float sq = 0.0f;
  for (size_t j = t; j < n; j += threads) {
    const float d = x[j] - mean;
    sq += d * d;
  }
  return (float2)(mean, tsr_row_sum(sq, row));
}

// Coordinates (s0..s5) of element i of a row-major walk over `dims` (s0..s5; s6, s7 unused).
inline int8 tsr_coords6(int i, int8 dims) {
  int8 c = (int8)(0);
  c.s5 = i % dims.s5;
  i /= dims.s5;
  c.s4 = i % dims.s4;
  i /= dims.s4;
  c.s3 = i % dims.s3;
  i /= dims.s3;
  c.s2 = i % dims.s2;
  i /= dims.s2;
  c.s1 = i % dims.s1;
  c.s0 = i / dims.s1;
  return c;
}

// The offset of coordinates `c` when each axis moves by `steps`.
inline int tsr_dot6(int8 c, int8 steps) {
  return c.s0 * steps.s0 + c.s1 * steps.s1 + c.s2 * steps.s2 + c.s3 * steps.s3 +
         c.s4 * steps.s4 + c.s5 * steps.s5;
}

// The offset of element i of a walk over `dims` when each axis moves by `steps`.
inline int tsr_walk6(int i, int8 dims, int8 steps) {
  return tsr_dot6(tsr_coords6(i, dims), steps);
}

// A fused activation: act 0 none, 1 relu, 2 clip(a, b), 3 leaky relu (slope a).
inline float tsr_activate(float v, int act, float a, float b) {
  if (act == 1) return fmax(v, 0.0f);
  if (act == 2) return fmin(fmax(v, a), b);
  if (act == 3) return v >= 0.0f ? v : a * v;
  return v;
}

// Build-time knob "unroll" of the conv schedules: TSR_FOR_UNROLLED(n, BODY) runs BODY(i) for
// i = 0 .. n-1, UNROLL bodies per trip of the main loop (written out, not left to a pragma some
// compilers ignore) and the remainder one at a time. BODY is a function-like macro whose
// expansion is a block.
#ifndef UNROLL
#define UNROLL 1
#endif
#if UNROLL == 1
#define TSR_UNROLLED(BODY, i) BODY(i)
#elif UNROLL == 2
#define TSR_UNROLLED(BODY, i) BODY(i) BODY((i) + 1)
#elif UNROLL == 4
#define TSR_UNROLLED(BODY, i) BODY(i) BODY((i) + 1) BODY((i) + 2) BODY((i) + 3)
#else
#error "UNROLL must be 1, 2 or 4"
#endif
#define TSR_FOR_UNROLLED(n, BODY)                                               \
  {                                                                             \
    int tsr_i = 0;                                                              \
    for (; tsr_i + UNROLL <= (n); tsr_i += UNROLL) { TSR_UNROLLED(BODY, tsr_i) } \
    for (; tsr_i < (n); ++tsr_i) { BODY(tsr_i) }                                \
  }
