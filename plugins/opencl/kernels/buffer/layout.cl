// Layout conversions of the mali plugin. NCHW4c stores a [N, C, H, W] value as
// [N][ceil(C/4)][H][W][4]: channel c lives in block c / 4, lane c % 4; the lanes of channels >= C
// in the last block are zero. d = (N, C, H * W, ceil(C / 4)) in both kernels.

// One work-item per element of the padded NCHW4c output.
__kernel void nchw_to_nchw4c_f32(__global const float* x, __global float* y, int4 d) {
  const int i = get_global_id(0);
  if (i >= d.x * d.w * d.z * 4) return;
  const int lane = i & 3;
  int r = i >> 2;
  const int p = r % d.z;
  r /= d.z;
  const int c = (r % d.w) * 4 + lane;
  const int n = r / d.w;
  y[i] = c < d.y ? x[(n * d.y + c) * d.z + p] : 0.0f;
}

// One work-item per element of the NCHW output.
__kernel void nchw4c_to_nchw_f32(__global const float* x, __global float* y, int4 d) {
  const int i = get_global_id(0);
  if (i >= d.x * d.y * d.z) return;
  const int p = i % d.z;
  const int r = i / d.z;
  const int c = r % d.y;
  const int n = r / d.y;
  y[i] = x[((n * d.w + (c >> 2)) * d.z + p) * 4 + (c & 3)];
}
