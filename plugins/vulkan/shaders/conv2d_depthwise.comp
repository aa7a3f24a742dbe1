// Depthwise convolution (one input channel per group; a channel multiplier M = K / C): one
// invocation per output element, the KH x KW window read directly. Epilogue as conv2d_gemm.
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
layout(constant_id = 4) const int K = 1;
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
layout(constant_id = 15) const int HAS_BIAS = 0;
layout(constant_id = 16) const int HAS_RESIDUAL = 0;
layout(constant_id = 17) const int ACT = 0;
layout(constant_id = 18) const int ACT_A = 0;
layout(constant_id = 19) const int ACT_B = 0;

layout(std430, set = 0, binding = 0) readonly buffer Input { STORE x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Weight { STORE w[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { STORE bias[]; };
layout(std430, set = 0, binding = 3) readonly buffer Residual { STORE residual[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Output { STORE y[]; };

void main() {
  const uint o = linear_id();
  if (o >= uint(N * K * OH * OW)) return;
  const int ow = int(o) % OW;
  const int oh = (int(o) / OW) % OH;
  const int k = (int(o) / (OW * OH)) % K;
  const int n = int(o) / (OW * OH * K);
  const int c = k / (K / C);
  const int x_base = (n * C + c) * H * W;
  MATH acc = MATH(HAS_BIAS != 0 ? float(bias[k]) : 0.0);
  for (int kh = 0; kh < KH; ++kh) {
    const int ih = oh * SH - PH + kh * DH;
    if (ih < 0 || ih >= H) continue;
    for (int kw = 0; kw < KW; ++kw) {
      const int iw = ow * SW - PW + kw * DW;
      if (iw < 0 || iw >= W) continue;
      acc += MATH(x[x_base + ih * W + iw]) * MATH(w[(k * KH + kh) * KW + kw]);
    }
  }
  float v = float(acc);
  if (HAS_RESIDUAL != 0) v += float(residual[o]);
  y[o] = STORE(activate(ACT, v, intBitsToFloat(ACT_A), intBitsToFloat(ACT_B)));
}
