// Pooling on NCHW float buffers. One work-item per output element.
//   in = (N, C, H, W), out = (N, C, OH, OW), k = (KH, KW, mode (0 max, 1 avg), count_include_pad),
//   sp = (stride_h, stride_w, pad_top, pad_left), ex = (dil_h, dil_w, pad_bottom, pad_right).
__kernel void pool2d_f32(__global const float* x, __global float* y, int4 in, int4 out, int4 k,
                         int4 sp, int4 ex) {
  const int i = get_global_id(0);
  const int total = out.x * out.y * out.z * out.w;
  if (i >= total) return;
  const int ox = i % out.w;
  const int oy = (i / out.w) % out.z;
  const int plane = i / (out.w * out.z);
  __global const float* xp = x + plane * in.z * in.w;
  float best = -INFINITY;
  float sum = 0.0f;
  int count = 0;
  for (int ky = 0; ky < k.x; ++ky) {
    const int iy = oy * sp.x - sp.z + ky * ex.x;
    const bool row_in = iy >= 0 && iy < in.z;
    const bool row_padded = iy >= -sp.z && iy < in.z + ex.z;
    for (int kx = 0; kx < k.y; ++kx) {
      const int ix = ox * sp.y - sp.w + kx * ex.y;
      const bool inside = row_in && ix >= 0 && ix < in.w;
      if (inside) {
        const float v = xp[iy * in.w + ix];
        best = fmax(best, v);
        sum += v;
      }
      const bool padded = row_padded && ix >= -sp.w && ix < in.w + ex.w;
      if (k.w ? padded : inside) ++count;
    }
  }
  y[i] = k.z == 0 ? best : (count == 0 ? 0.0f : sum / (float)count);
}

// y[r] = mean(x[r * inner .. r * inner + inner)).
__kernel void global_avg_pool_f32(__global const float* x, __global float* y, int rows,
                                  int inner) {
  const int r = get_global_id(0);
  if (r >= rows) return;
  __global const float* xp = x + r * inner;
  float sum = 0.0f;
  for (int j = 0; j < inner; ++j) sum += xp[j];
  y[r] = sum / (float)inner;
}

// NCHW4c pooling (see layout.cl): one work-item per output float4 (four channels of one pixel);
// the arguments are pool2d_f32's with the channel dims counting blocks: in = (N, CB, H, W),
// out = (N, CB, OH, OW). Zero padded lanes pool to zero.
__kernel void pool2d_4c_f32(__global const float4* x, __global float4* y, int4 in, int4 out,
                            int4 k, int4 sp, int4 ex) {
  const int i = get_global_id(0);
  const int total = out.x * out.y * out.z * out.w;
  if (i >= total) return;
  const int ox = i % out.w;
  const int oy = (i / out.w) % out.z;
  const int plane = i / (out.w * out.z);
  __global const float4* xp = x + plane * in.z * in.w;
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
        const float4 v = xp[iy * in.w + ix];
        best = fmax(best, v);
        sum += v;
      }
      const bool padded = row_padded && ix >= -sp.w && ix < in.w + ex.w;
      if (k.w ? padded : inside) ++count;
    }
  }
  y[i] = k.z == 0 ? best : (count == 0 ? (float4)(0.0f) : sum / (float)count);
}

// NCHW4c global average: y4[r] = mean of the `inner` float4 of block row r (rows = N * CB). The
// output [N, C, 1, 1] in NCHW4c is byte-identical to NCHW when C % 4 == 0.
__kernel void global_avg_pool_4c_f32(__global const float4* x, __global float4* y, int rows,
                                     int inner) {
  const int r = get_global_id(0);
  if (r >= rows) return;
  __global const float4* xp = x + r * inner;
  float4 sum = (float4)(0.0f);
  for (int j = 0; j < inner; ++j) sum += xp[j];
  y[r] = sum / (float)inner;
}
