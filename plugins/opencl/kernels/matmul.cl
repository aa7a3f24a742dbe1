// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// MatMul of row-major operands with flattened batch dims: y[b] = a[b] (M x K) * b[b] (K x N).
// Work-items (N, M, batches); a_batch / b_batch: elements between batches (0: shared operand).
// The guards cover empty shapes too (a launch is never smaller than one work-item).
__kernel void gemm_batched_f32(__global const float* a, __global const float* b, __global float* y,
                               int M, int N, int K, int a_batch, int b_batch, int batches) {
  const int j = get_global_id(0), i = get_global_id(1), z = get_global_id(2);
  if (i >= M || j >= N || z >= batches) return;
  const __global float* ap = a + (size_t)z * a_batch + (size_t)i * K;
  const __global float* bp = b + (size_t)z * b_batch + j;
  float acc = 0.0f;
  for (int p = 0; p < K; ++p) acc += ap[p] * bp[(size_t)p * N];
  y[((size_t)z * M + i) * N + j] = acc;
}
