// Element-wise ops on texture-layout tensors; one work-item per texel, size = (width, height).

// op: 0 relu, 1 clip(a, b), 2 sigmoid, 3 hard sigmoid (alpha a, beta b), 4 hard swish, 5 erf,
// 6 tanh. Padding lanes of the last channel block are computed too: every op maps 0 to a finite
// value, so they stay harmless to the convolutions that multiply them by zero weights.
float4 unary_op(float4 v, int op, float a, float b) {
  switch (op) {
    case 0:
      return fmax(v, (float4)(0.0f));
    case 1:
      return fmin(fmax(v, (float4)(a)), (float4)(b));
    case 2:
      return 1.0f / (1.0f + exp(-v));
    case 3:
      return clamp(v * a + b, 0.0f, 1.0f);
    case 4:
      return v * clamp(v + 3.0f, 0.0f, 6.0f) * (1.0f / 6.0f);
    case 5:
      return erf(v);
    default:
      return tanh(v);
  }
}

__kernel void unary_image(__read_only image2d_t x, __write_only image2d_t y, int4 size, int op,
                          float a, float b) {
  const int gx = get_global_id(0), gy = get_global_id(1);
  if (gx >= size.x || gy >= size.y) return;
  const float4 v = read_imagef(x, kSampler, (int2)(gx, gy));
  write_imagef(y, (int2)(gx, gy), unary_op(v, op, a, b));
}

// op: 0 add, 1 sub, 2 mul, 3 div.
float4 binary_op(float4 a, float4 b, int op) {
  switch (op) {
    case 0:
      return a + b;
    case 1:
      return a - b;
    case 2:
      return a * b;
    default:
      return a / b;
  }
}

// y = x op z for two images of one shape; lanes past the channel count (s.x: C) are written 0 so
// a division there leaves no NaN behind.
__kernel void binary_image(__read_only image2d_t x, __read_only image2d_t z,
                           __write_only image2d_t y, int4 size, int channels, int width, int op) {
  const int gx = get_global_id(0), gy = get_global_id(1);
  if (gx >= size.x || gy >= size.y) return;
  const int2 p = (int2)(gx, gy);
  float4 v = binary_op(read_imagef(x, kSampler, p), read_imagef(z, kSampler, p), op);
  const int c0 = (gx / width) * 4;
  if (c0 + 3 >= channels) {
    v.y = c0 + 1 < channels ? v.y : 0.0f;
    v.z = c0 + 2 < channels ? v.z : 0.0f;
    v.w = c0 + 3 < channels ? v.w : 0.0f;
  }
  write_imagef(y, p, v);
}

// y = x op b (or b op x with swap) where x has the output's shape s = (N, C, H, W) and b is an
// NCHW float buffer broadcast over it: element (n, c, h, w) of b sits at dot(stride, (n, c, h, w))
// with stride 0 along each broadcast dim. Lanes past C are written 0.
__kernel void binary_bcast_image(__read_only image2d_t x, __global const float* b,
                                 __write_only image2d_t y, int4 s, int4 stride, int op, int swap) {
  const int gx = get_global_id(0), gy = get_global_id(1);
  const int c4s = (s.y + 3) / 4;
  if (gx >= s.w * c4s || gy >= s.x * s.z) return;
  const int c0 = (gx / s.w) * 4, w = gx % s.w, n = gy / s.z, h = gy % s.z;
  const int base = n * stride.x + h * stride.z + w * stride.w;
  float4 bv = (float4)(0.0f);
  bv.x = b[base + c0 * stride.y];
  bv.y = c0 + 1 < s.y ? b[base + (c0 + 1) * stride.y] : 0.0f;
  bv.z = c0 + 2 < s.y ? b[base + (c0 + 2) * stride.y] : 0.0f;
  bv.w = c0 + 3 < s.y ? b[base + (c0 + 3) * stride.y] : 0.0f;
  const float4 xv = read_imagef(x, kSampler, (int2)(gx, gy));
  float4 v = swap ? binary_op(bv, xv, op) : binary_op(xv, bv, op);
  v.y = c0 + 1 < s.y ? v.y : 0.0f;
  v.z = c0 + 2 < s.y ? v.z : 0.0f;
  v.w = c0 + 3 < s.y ? v.w : 0.0f;
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
