// Convolution as an implicit GEMM (ops/conv.cpp): per group, out[m][p] = sum_k W[m][k] * X[k][p]
// with m an output channel, p an output pixel and k = (input channel, kh, kw); X is never
// materialised: each k-slice of the input patch is gathered into shared memory. A work-group of
// 16 x 16 invocations computes a TILE x TILE block (TILE/16 x TILE/16 per invocation, strided so
// that neighbouring invocations write neighbouring pixels). Epilogue: bias, residual add,
// activation. Shapes and the tile are specialization constants.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"

layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;

layout(constant_id = 0) const int TILE = 64;  // 32 or 64
layout(constant_id = 1) const int C = 1;      // input channels
layout(constant_id = 2) const int H = 1;
layout(constant_id = 3) const int W = 1;
layout(constant_id = 4) const int K = 1;      // output channels
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
layout(constant_id = 15) const int GROUPS = 1;
layout(constant_id = 16) const int HAS_BIAS = 0;
layout(constant_id = 17) const int HAS_RESIDUAL = 0;
layout(constant_id = 18) const int ACT = 0;
layout(constant_id = 19) const int ACT_A = 0;  // float bits
layout(constant_id = 20) const int ACT_B = 0;

layout(std430, set = 0, binding = 0) readonly buffer Input { STORE x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Weight { STORE w[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { STORE bias[]; };
layout(std430, set = 0, binding = 3) readonly buffer Residual { STORE residual[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Output { STORE y[]; };

const int TK = 16;
const int R = TILE / 16;  // outputs per invocation along each side
shared MATH tile_w[TK][TILE];
shared MATH tile_x[TK][TILE];

void main() {
  const int CG = C / GROUPS;
  const int KG = K / GROUPS;
  const int KDIM = CG * KH * KW;
  const int P = OH * OW;
  const int n = int(gl_WorkGroupID.z) / GROUPS;
  const int g = int(gl_WorkGroupID.z) % GROUPS;
  const int m0 = int(gl_WorkGroupID.y) * TILE;
  const int p0 = int(gl_WorkGroupID.x) * TILE;
  const int tx = int(gl_LocalInvocationID.x);
  const int ty = int(gl_LocalInvocationID.y);
  const int tid = ty * 16 + tx;
  const int x_base = (n * C + g * CG) * H * W;
  const int w_base = g * KG * KDIM;

  MATH acc[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) acc[i][j] = MATH(0.0);

  for (int k0 = 0; k0 < KDIM; k0 += TK) {
    // Weights: TK x TILE, read along k (contiguous in memory).
    for (int e = tid; e < TK * TILE; e += 256) {
      const int kk = e % TK;
      const int mm = e / TK;
      const int k = k0 + kk;
      const int m = m0 + mm;
      tile_w[kk][mm] = MATH((k < KDIM && m < KG) ? float(w[w_base + m * KDIM + k]) : 0.0);
    }
    // Input patches: TK x TILE, read along the pixels.
    for (int e = tid; e < TK * TILE; e += 256) {
      const int pp = e % TILE;
      const int kk = e / TILE;
      const int k = k0 + kk;
      const int p = p0 + pp;
      float v = 0.0;
      if (k < KDIM && p < P) {
        const int c = k / (KH * KW);
        const int r = k % (KH * KW);
        const int ih = (p / OW) * SH - PH + (r / KW) * DH;
        const int iw = (p % OW) * SW - PW + (r % KW) * DW;
        if (ih >= 0 && ih < H && iw >= 0 && iw < W) v = float(x[x_base + (c * H + ih) * W + iw]);
      }
      tile_x[kk][pp] = MATH(v);
    }
    barrier();
    for (int kk = 0; kk < TK; ++kk) {
      MATH a[4];
      MATH b[4];
      for (int i = 0; i < R; ++i) a[i] = tile_w[kk][ty + 16 * i];
      for (int j = 0; j < R; ++j) b[j] = tile_x[kk][tx + 16 * j];
      for (int i = 0; i < R; ++i)
        for (int j = 0; j < R; ++j) acc[i][j] += a[i] * b[j];
    }
    barrier();
  }

  const float act_a = intBitsToFloat(ACT_A);
  const float act_b = intBitsToFloat(ACT_B);
  for (int i = 0; i < R; ++i) {
    const int m = m0 + ty + 16 * i;
    if (m >= KG) continue;
    const int channel = g * KG + m;
    const float b = HAS_BIAS != 0 ? float(bias[channel]) : 0.0;
    for (int j = 0; j < R; ++j) {
      const int p = p0 + tx + 16 * j;
      if (p >= P) continue;
      const int o = (n * K + channel) * P + p;
      float v = float(acc[i][j]) + b;
      if (HAS_RESIDUAL != 0) v += float(residual[o]);
      y[o] = STORE(activate(ACT, v, act_a, act_b));
    }
  }
}
