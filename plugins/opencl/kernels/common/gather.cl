// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// Gather along one axis with constant indices (already made non-negative, passed as floats: the
// plugins' constant buffers are float, exact for indices below 2^24). The input is viewed as
// (outer, axis_dim, inner), the output as (outer, n_idx, inner); one work-item per output element.
__kernel void gather_f32(__global const float* x, __global const float* idx, __global float* y,
                         int outer, int axis_dim, int inner, int n_idx) {
  const int i = get_global_id(0);
  if (i >= outer * n_idx * inner) return;
  const int k = i % inner, j = (i / inner) % n_idx, o = i / (inner * n_idx);
  y[i] = x[((size_t)o * axis_dim + (int)idx[j]) * inner + k];
}
