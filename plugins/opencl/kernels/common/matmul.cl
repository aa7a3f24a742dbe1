// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// MatMul of row-major operands with flattened batch dims: y[b] = a[b] (M x K) * b[b] (K x N).
// A work-item computes an MM_ROWS x MM_COLS tile of y (build-time knobs rows_per_item,
// cols_per_item): per step of K it loads MM_ROWS values of A and MM_COLS of B for
// MM_ROWS * MM_COLS mads, where one output per work-item did one mad per two loads.
// Work-items (ceil(N / MM_COLS), ceil(M / MM_ROWS), batches); a_batch / b_batch: elements
// between batches (0: shared operand). The guards cover partial tiles and empty shapes (a launch
// is never smaller than one work-item).
#ifndef MM_ROWS
#define MM_ROWS 1
#endif
#ifndef MM_COLS
#define MM_COLS 1
#endif
__kernel void gemm_batched_f32(__global const float* a, __global const float* b, __global float* y,
                               int M, int N, int K, int a_batch, int b_batch, int batches) {
  const int j0 = get_global_id(0) * MM_COLS, i0 = get_global_id(1) * MM_ROWS;
  const int z = get_global_id(2);
  if (i0 >= M || j0 >= N || z >= batches) return;
  const __global float* ap = a + (size_t)z * a_batch;
  const __global float* bp = b + (size_t)z * b_batch;
  // Rows and columns past the edge repeat the last one (in bounds) and are not stored.
  int rows[MM_ROWS], cols[MM_COLS];
  for (int r = 0; r < MM_ROWS; ++r) rows[r] = min(i0 + r, M - 1);
  for (int c = 0; c < MM_COLS; ++c) cols[c] = min(j0 + c, N - 1);
  float acc[MM_ROWS][MM_COLS];
  for (int r = 0; r < MM_ROWS; ++r) {
    for (int c = 0; c < MM_COLS; ++c) acc[r][c] = 0.0f;
  }
  for (int p = 0; p < K; ++p) {
    float av[MM_ROWS], bv[MM_COLS];
    for (int r = 0; r < MM_ROWS; ++r) av[r] = ap[(size_t)rows[r] * K + p];
    for (int c = 0; c < MM_COLS; ++c) bv[c] = bp[(size_t)p * N + cols[c]];
    for (int r = 0; r < MM_ROWS; ++r) {
      for (int c = 0; c < MM_COLS; ++c) acc[r][c] = mad(av[r], bv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < MM_ROWS && i0 + r < M; ++r) {
    for (int c = 0; c < MM_COLS && j0 + c < N; ++c) {
      y[((size_t)z * M + i0 + r) * N + j0 + c] = acc[r][c];
    }
  }
}

// The same product with operands staged in __local memory: a work-group of (lx, ly) work-items
// computes a (ly * MT_R) x (lx * MT_R) tile of y, copying MT_K-deep slices of A and B into local
// memory with coalesced reads (each global value read once per group, not once per work-item),
// and each work-item accumulates MT_R x MT_R outputs strided by the group size, so its stores
// and local reads stay contiguous across the group. Build-time knobs: wg_side (MT_WG, the
// largest group side the local arrays hold), per_item (MT_R), k_tile (MT_K). A group smaller
// than MT_WG x MT_WG (a kernel limit shrank it) still covers its own, smaller tile.
// Global (ceil(N / (MT_WG * MT_R)) * MT_WG, ceil(M / (MT_WG * MT_R)) * MT_WG, batches).
#ifndef MT_WG
#define MT_WG 16
#endif
#ifndef MT_R
#define MT_R 4
#endif
#ifndef MT_K
#define MT_K 16
#endif
#define MT_T (MT_WG * MT_R)
__kernel void gemm_tiled_f32(__global const float* a, __global const float* b, __global float* y,
                             int M, int N, int K, int a_batch, int b_batch, int batches) {
  __local float as[MT_K][MT_T + 1];  // A slice, transposed: as[k][m]; +1 spreads the banks
  __local float bs[MT_K][MT_T];
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int sx = get_local_size(0), sy = get_local_size(1);
  const int tn = sx * MT_R, tm = sy * MT_R;
  const int n0 = get_group_id(0) * tn, m0 = get_group_id(1) * tm;
  const int z = get_global_id(2);
  const int lid = ly * sx + lx, threads = sx * sy;
  // No early return: every work-item reaches the barriers (z < batches always: global z is it).
  const __global float* ap = a + (size_t)z * a_batch;
  const __global float* bp = b + (size_t)z * b_batch;
  float acc[MT_R][MT_R];
  for (int r = 0; r < MT_R; ++r) {
    for (int c = 0; c < MT_R; ++c) acc[r][c] = 0.0f;
  }
  for (int k0 = 0; k0 < K; k0 += MT_K) {
    for (int e = lid; e < tm * MT_K; e += threads) {
      const int r = e / MT_K, k = e % MT_K;
      const int gm = m0 + r, gk = k0 + k;
      as[k][r] = gm < M && gk < K ? ap[(size_t)gm * K + gk] : 0.0f;
    }
    for (int e = lid; e < MT_K * tn; e += threads) {
      const int k = e / tn, c = e % tn;
      const int gk = k0 + k, gn = n0 + c;
      bs[k][c] = gk < K && gn < N ? bp[(size_t)gk * N + gn] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < MT_K; ++k) {
      float av[MT_R], bv[MT_R];
      for (int r = 0; r < MT_R; ++r) av[r] = as[k][ly + r * sy];
      for (int c = 0; c < MT_R; ++c) bv[c] = bs[k][lx + c * sx];
      for (int r = 0; r < MT_R; ++r) {
        for (int c = 0; c < MT_R; ++c) acc[r][c] = mad(av[r], bv[c], acc[r][c]);
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (z >= batches) return;
  for (int r = 0; r < MT_R; ++r) {
    const int m = m0 + ly + r * sy;
    if (m >= M) break;
    for (int c = 0; c < MT_R; ++c) {
      const int n = n0 + lx + c * sx;
      if (n < N) y[((size_t)z * M + m) * N + n] = acc[r][c];
    }
  }
}

// Gemm and 2-D MatMul, Y = alpha * A' * B' + beta * C, with the reduction over K split across
// the work-group's dimension 2: batch-1 classifier heads (M = 1, K = 2048, N = 1000) have too
// few outputs to fill a GPU one per work-item. Slices 1.. leave their partial sums in `part`
// (__local, (k_split - 1) * local_size(0) floats) for slice 0 to add (tsr_split_sum). Transposes are strides:
// A'(m, k) = a[m * st.x + k * st.y], B'(k, n) = b[k * st.z + n * st.w]; C broadcasts through
// zero strides cs = (c_m, c_n, has_c, 0). Global (N, M, k_split), local (lx, 1, k_split).
__kernel void gemm_split_f32(__global const float* a, __global const float* b,
                             __global const float* c, __global float* y, int M, int N, int K,
                             int4 st, int4 cs, float alpha, float beta, __local float* part) {
  const int n = get_global_id(0), m = get_global_id(1);
  const int ks = get_local_size(2), kz = get_local_id(2);
  // No early return: every work-item reaches the barrier in tsr_split_sum.
  const bool live = n < N && m < M;
  float acc = 0.0f;
  if (live) {
    __global const float* ap = a + m * st.x;
    __global const float* bp = b + n * st.w;
    for (int k = kz; k < K; k += ks) acc = mad(ap[k * st.y], bp[k * st.z], acc);
  }
  if (!tsr_split_sum(&acc, part) || !live) return;
  float r = alpha * acc;
  if (cs.z) r += beta * c[m * cs.x + n * cs.y];
  y[m * N + n] = r;
}
