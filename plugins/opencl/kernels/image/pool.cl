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

// The mean of channel block c4 of batch n over the H x W plane; in = (N, C4, H, W).
float4 plane_mean(__read_only image2d_t x, int c4, int n, int4 in) {
  float4 sum = (float4)(0.0f);
  for (int h = 0; h < in.z; ++h) {
    for (int w = 0; w < in.w; ++w) {
      sum += read_imagef(x, kSampler, (int2)(c4 * in.w + w, n * in.z + h));
    }
  }
  return sum / (float)(in.z * in.w);
}

// Output (N, C, 1, 1): texel (c4, n). Work-items: (C4, N); in = (N, C4, H, W).
__kernel void global_avg_image(__read_only image2d_t x, __write_only image2d_t y, int4 in) {
  const int c4 = get_global_id(0), n = get_global_id(1);
  if (c4 >= in.y || n >= in.x) return;
  write_imagef(y, (int2)(c4, n), plane_mean(x, c4, n, in));
}

// ReduceMean over H and W written as an NCHW [N, C] buffer (keepdims = 0). Work-items: (C4, N).
__kernel void global_avg_to_nchw(__read_only image2d_t x, __global float* y, int4 in,
                                 int channels) {
  const int c4 = get_global_id(0), n = get_global_id(1);
  if (c4 >= in.y || n >= in.x) return;
  const float4 sum = plane_mean(x, c4, n, in);
  for (int j = 0; j < 4; ++j) {
    if (c4 * 4 + j < channels) y[n * channels + c4 * 4 + j] = lane_of(sum, j);
  }
}

// Bilinear resize of a texture-layout image: one work-item per output texel (W_out * C4,
// N * H_out). in = (N, C4, H, W); mode as tsr_bilinear's (helpers.cl).
__kernel void resize_bilinear_image(__read_only image2d_t x, __write_only image2d_t y, int4 in,
                                    int out_h, int out_w, int mode) {
  const int gx = get_global_id(0), gy = get_global_id(1);
  if (gx >= out_w * in.y || gy >= in.x * out_h) return;
  const int c4 = gx / out_w, ow = gx % out_w, n = gy / out_h, oh = gy % out_h;
  const tsr_bilinear_taps t = tsr_bilinear(oh, ow, in.z, in.w, out_h, out_w, mode);
  const int y0 = t.y0, y1 = t.y1, x0 = t.x0, x1 = t.x1;
  const float fy = t.fy, fx = t.fx;
  const int row0 = n * in.z + y0, row1 = n * in.z + y1, col = c4 * in.w;
  const float4 a = read_imagef(x, kSampler, (int2)(col + x0, row0));
  const float4 b = read_imagef(x, kSampler, (int2)(col + x1, row0));
  const float4 c = read_imagef(x, kSampler, (int2)(col + x0, row1));
  const float4 d = read_imagef(x, kSampler, (int2)(col + x1, row1));
  const float4 top = a + (b - a) * fx, bottom = c + (d - c) * fx;
  write_imagef(y, (int2)(gx, gy), top + (bottom - top) * fy);
}
