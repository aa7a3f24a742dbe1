// Pooling on texture-layout tensors, four channels per work-item.
//   in = (N, C4, H, W), out = (N, C4, OH, OW), k = (KH, KW, mode (0 max, 1 avg), count_include_pad),
//   sp = (stride_h, stride_w, pad_top, pad_left), ex = (dil_h, dil_w, pad_bottom, pad_right).
// Work-items: (OW * C4, N * OH).
__kernel void pool2d_image(__read_only image2d_t x, __write_only image2d_t y, int4 in, int4 out,
                           int4 k, int4 sp, int4 ex) {
  const int gx = get_global_id(0), gy = get_global_id(1);
  if (gx >= out.w * out.y || gy >= out.x * out.z) return;
  const int c4 = gx / out.w, ox = gx % out.w, n = gy / out.z, oy = gy % out.z;
  float4 best = (float4)(-INFINITY);
  float4 sum = (float4)(0.0f);
  int count = 0;
  for (int ky = 0; ky < k.x; ++ky) {
    const int iy = oy * sp.x - sp.z + ky * ex.x;
    const bool row_in = iy >= 0 && iy < in.z;
    const bool row_padded = iy >= -sp.z && iy < in.z + ex.z;
    for (int kx = 0; kx < k.y; ++kx) {
      const int ix = ox * sp.y - sp.w + kx * ex.y;
      const bool inside = row_in && ix >= 0 && ix < in.w;
      if (inside) {
        const float4 v = read_imagef(x, kSampler, (int2)(c4 * in.w + ix, n * in.z + iy));
        best = fmax(best, v);
        sum += v;
      }
      const bool padded = row_padded && ix >= -sp.w && ix < in.w + ex.w;
      if (k.w ? padded : inside) ++count;
    }
  }
  const float4 r = k.z == 0 ? best : (count == 0 ? (float4)(0.0f) : sum / (float)count);
  write_imagef(y, (int2)(gx, gy), r);
}

// Output (N, C, 1, 1): texel (c4, n). Work-items: (C4, N); in = (N, C4, H, W).
__kernel void global_avg_image(__read_only image2d_t x, __write_only image2d_t y, int4 in) {
  const int c4 = get_global_id(0), n = get_global_id(1);
  if (c4 >= in.y || n >= in.x) return;
  float4 sum = (float4)(0.0f);
  for (int h = 0; h < in.z; ++h) {
    for (int w = 0; w < in.w; ++w) {
      sum += read_imagef(x, kSampler, (int2)(c4 * in.w + w, n * in.z + h));
    }
  }
  write_imagef(y, (int2)(c4, n), sum / (float)(in.z * in.w));
}
