// Y = alpha * A' * B' + beta * C for Gemm and 2-D MatMul. Transposes are expressed as strides:
// A'(m, k) = a[m * st.x + k * st.y], B'(k, n) = b[k * st.z + n * st.w]; C broadcasts through
// zero strides cs = (c_m, c_n, has_c, 0). Global range (N, M), one output per work-item.
__kernel void gemm_f32(__global const float* a, __global const float* b, __global const float* c,
                       __global float* y, int M, int N, int K, int4 st, int4 cs, float alpha,
                       float beta) {
  const int n = get_global_id(0);
  const int m = get_global_id(1);
  if (n >= N || m >= M) return;
  float acc = 0.0f;
  __global const float* ap = a + m * st.x;
  __global const float* bp = b + n * st.w;
  for (int k = 0; k < K; ++k) acc += ap[k * st.y] * bp[k * st.z];
  float r = alpha * acc;
  if (cs.z) r += beta * c[m * cs.x + n * cs.y];
  y[m * N + n] = r;
}
