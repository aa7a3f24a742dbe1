// Resize of the two trailing axes of NCHW, nearest or bilinear (ops/resize.cpp), with ONNX's
// coordinate transformation modes; one invocation per output element.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int PLANES = 1;
layout(constant_id = 1) const int H = 1;
layout(constant_id = 2) const int W = 1;
layout(constant_id = 3) const int OH = 1;
layout(constant_id = 4) const int OW = 1;
layout(constant_id = 5) const int SCALE_H = 1065353216;  // float bits
layout(constant_id = 6) const int SCALE_W = 1065353216;
layout(constant_id = 7) const int LINEAR = 0;
// 0 half_pixel, 1 pytorch_half_pixel, 2 align_corners, 3 asymmetric
layout(constant_id = 8) const int COORD = 0;
// 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil
layout(constant_id = 9) const int NEAREST = 0;

layout(std430, set = 0, binding = 0) readonly buffer Input { STORE x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Output { STORE y[]; };

float source(int o, int out_len, int in_len, float scale) {
  if (COORD == 0) return (float(o) + 0.5) / scale - 0.5;
  if (COORD == 1) return out_len > 1 ? (float(o) + 0.5) / scale - 0.5 : 0.0;
  if (COORD == 2) return out_len == 1 ? 0.0 : float(o) * float(in_len - 1) / float(out_len - 1);
  return float(o) / scale;
}

int nearest(float s, int len) {
  int i;
  if (NEAREST == 2) i = int(floor(s));
  else if (NEAREST == 3) i = int(ceil(s));
  else if (NEAREST == 0) i = (fract(s) == 0.5) ? int(floor(s)) : int(floor(s + 0.5));
  else i = (fract(s) == 0.5) ? int(ceil(s)) : int(floor(s + 0.5));
  return clamp(i, 0, len - 1);
}

void main() {
  const uint o = linear_id();
  if (o >= uint(PLANES * OH * OW)) return;
  const int ow = int(o) % OW;
  const int oh = (int(o) / OW) % OH;
  const int base = (int(o) / (OW * OH)) * H * W;
  const float sh = source(oh, OH, H, intBitsToFloat(SCALE_H));
  const float sw = source(ow, OW, W, intBitsToFloat(SCALE_W));
  if (LINEAR == 0) {
    y[o] = x[base + nearest(sh, H) * W + nearest(sw, W)];
    return;
  }
  const float ch = clamp(sh, 0.0, float(H - 1));
  const float cw = clamp(sw, 0.0, float(W - 1));
  const int h0 = int(floor(ch));
  const int w0 = int(floor(cw));
  const int h1 = min(h0 + 1, H - 1);
  const int w1 = min(w0 + 1, W - 1);
  const float fh = ch - float(h0);
  const float fw = cw - float(w0);
  const float top = mix(float(x[base + h0 * W + w0]), float(x[base + h0 * W + w1]), fw);
  const float bottom = mix(float(x[base + h1 * W + w0]), float(x[base + h1 * W + w1]), fw);
  y[o] = STORE(mix(top, bottom, fh));
}
