// ConvTranspose (1-D as H = 1, and 2-D; ops/conv_transpose.cpp) on NCHW buffers, one invocation
// per output element: the gather form of the scatter ONNX describes. Output (oh, ow) takes input
// (ih, iw) through tap (kh, kw) where oh + PH - kh * DH = ih * SH, so a tap either divides
// evenly or contributes nothing. Weights (C, M / GROUP, KH, KW); PH, PW the begin pads (negative
// when output_shape asks for more than the taps reach). Bias and a fused activation after.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int N = 1;
layout(constant_id = 1) const int C = 1;
layout(constant_id = 2) const int H = 1;
layout(constant_id = 3) const int W = 1;
layout(constant_id = 4) const int M = 1;
layout(constant_id = 5) const int OH = 1;
layout(constant_id = 6) const int OW = 1;
layout(constant_id = 7) const int KH = 1;
layout(constant_id = 8) const int KW = 1;
layout(constant_id = 9) const int SH = 1;
layout(constant_id = 10) const int SW = 1;
layout(constant_id = 11) const int PH = 0;
layout(constant_id = 12) const int PW = 0;
layout(constant_id = 13) const int DH = 1;
layout(constant_id = 14) const int DW = 1;
layout(constant_id = 15) const int GROUP = 1;
layout(constant_id = 16) const int HAS_BIAS = 0;
layout(constant_id = 17) const int ACT = 0;
layout(constant_id = 18) const int ACT_A = 0;
layout(constant_id = 19) const int ACT_B = 0;

layout(std430, set = 0, binding = 0) readonly buffer Input { STORE x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Weight { STORE w[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { STORE bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Output { STORE y[]; };

void main() {
  const uint o = linear_id();
  if (o >= uint(N * M * OH * OW)) return;
  const int ow = int(o) % OW;
  const int oh = (int(o) / OW) % OH;
  const int m = (int(o) / (OW * OH)) % M;
  const int n = int(o) / (OW * OH * M);
  const int mg = M / GROUP, cg = C / GROUP;
  const int g = m / mg;
  MATH acc = MATH(HAS_BIAS != 0 ? float(bias[m]) : 0.0);
  for (int c = g * cg; c < (g + 1) * cg; ++c) {
    const int x_base = (n * C + c) * H * W;
    const int w_base = (c * mg + m % mg) * KH * KW;
    for (int kh = 0; kh < KH; ++kh) {
      const int th = oh + PH - kh * DH;
      if (th < 0 || th % SH != 0 || th / SH >= H) continue;
      for (int kw = 0; kw < KW; ++kw) {
        const int tw = ow + PW - kw * DW;
        if (tw < 0 || tw % SW != 0 || tw / SW >= W) continue;
        acc += MATH(x[x_base + (th / SH) * W + tw / SW]) * MATH(w[w_base + kh * KW + kw]);
      }
    }
  }
  y[o] = STORE(activate(ACT, float(acc), intBitsToFloat(ACT_A), intBitsToFloat(ACT_B)));
}
