// Conversions between NCHW float buffers (region boundaries, buffer-only ops) and the texture
// layout. Work-items: (W * C4, N * H); s = (N, C, H, W).
__kernel void nchw_to_image(__global const float* x, __write_only image2d_t y, int4 s) {
  const int gx = get_global_id(0), gy = get_global_id(1);
  const int c4n = (s.y + 3) / 4;
  if (gx >= s.w * c4n || gy >= s.x * s.z) return;
  const int c4 = gx / s.w, w = gx % s.w, n = gy / s.z, h = gy % s.z;
  float v[4];
  for (int j = 0; j < 4; ++j) {
    const int c = c4 * 4 + j;
    v[j] = c < s.y ? x[((n * s.y + c) * s.z + h) * s.w + w] : 0.0f;
  }
  write_imagef(y, (int2)(gx, gy), (float4)(v[0], v[1], v[2], v[3]));
}

__kernel void image_to_nchw(__read_only image2d_t x, __global float* y, int4 s) {
  const int gx = get_global_id(0), gy = get_global_id(1);
  const int c4n = (s.y + 3) / 4;
  if (gx >= s.w * c4n || gy >= s.x * s.z) return;
  const int c4 = gx / s.w, w = gx % s.w, n = gy / s.z, h = gy % s.z;
  const float4 t = read_imagef(x, kSampler, (int2)(gx, gy));
  for (int j = 0; j < 4; ++j) {
    const int c = c4 * 4 + j;
    if (c < s.y) y[((n * s.y + c) * s.z + h) * s.w + w] = lane_of(t, j);
  }
}

// Concat along channels of NCHW buffers: input (s = N, C_in, H, W) into the output's channels
// [offset, offset + C_in) of `channels_out`. One work-item per input element.
__kernel void concat_channels(__global const float* x, __global float* y, int4 s,
                              int channels_out, int offset) {
  const int i = get_global_id(0);
  const int plane = s.z * s.w;
  if (i >= s.x * s.y * plane) return;
  const int n = i / (s.y * plane), c = (i / plane) % s.y, hw = i % plane;
  y[(n * channels_out + offset + c) * plane + hw] = x[i];
}
