// Gemm on NCHW float buffers (the texture layout does not fit 2-D operands). One output per
// work-item, work-items (N, M). st = (A row stride, A col stride, B row stride, B col stride),
// cs = (C row stride, C col stride, has_c, 0).
__kernel void gemm_f32(__global const float* a, __global const float* b, __global const float* c,
                       __global float* y, int M, int N, int K, int4 st, int4 cs, float alpha,
                       float beta) {
  const int j = get_global_id(0), i = get_global_id(1);
  if (i >= M || j >= N) return;
  float acc = 0.0f;
  for (int p = 0; p < K; ++p) acc += a[i * st.x + p * st.y] * b[p * st.z + j * st.w];
  float r = alpha * acc;
  if (cs.z) r += beta * c[i * cs.x + j * cs.y];
  y[i * N + j] = r;
}

