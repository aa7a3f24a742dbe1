// Element-wise ops on texture-layout tensors; one work-item per texel, size = (width, height).

// op: 0 relu, 1 clip(a, b).
__kernel void unary_image(__read_only image2d_t x, __write_only image2d_t y, int4 size, int op,
                          float a, float b) {
  const int gx = get_global_id(0), gy = get_global_id(1);
  if (gx >= size.x || gy >= size.y) return;
  float4 v = read_imagef(x, kSampler, (int2)(gx, gy));
  v = op == 0 ? fmax(v, (float4)(0.0f)) : fmin(fmax(v, (float4)(a)), (float4)(b));
  write_imagef(y, (int2)(gx, gy), v);
}

__kernel void add_image(__read_only image2d_t x, __read_only image2d_t z, __write_only image2d_t y,
                        int4 size) {
  const int gx = get_global_id(0), gy = get_global_id(1);
  if (gx >= size.x || gy >= size.y) return;
  const int2 p = (int2)(gx, gy);
  write_imagef(y, p, read_imagef(x, kSampler, p) + read_imagef(z, kSampler, p));
}

// y = x * scale[c4] + shift[c4] (BatchNormalization folded at compile time); s = (N, C4, H, W).
__kernel void affine_image(__read_only image2d_t x, __global const float4* scale,
                           __global const float4* shift, __write_only image2d_t y, int4 s) {
  const int gx = get_global_id(0), gy = get_global_id(1);
  if (gx >= s.w * s.y || gy >= s.x * s.z) return;
  const int c4 = gx / s.w;
  const int2 p = (int2)(gx, gy);
  write_imagef(y, p, read_imagef(x, kSampler, p) * scale[c4] + shift[c4]);
}
