// copy_strided.comp for values that are not float32 (ops/elementwise.cpp strided_copy: Transpose,
// Slice, Concat, Split, Expand, Tile, DepthToSpace, SpaceToDepth): the
// same rank-6 walk, elements of ESIZE bytes moved as raw bits (typed.glsl), so int64, int32,
// int8, uint8 and bool share one shader and no int64 arithmetic is needed.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "typed.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int D0 = 1;
layout(constant_id = 1) const int D1 = 1;
layout(constant_id = 2) const int D2 = 1;
layout(constant_id = 3) const int D3 = 1;
layout(constant_id = 4) const int D4 = 1;
layout(constant_id = 5) const int D5 = 1;
layout(constant_id = 6) const int S0 = 0;
layout(constant_id = 7) const int S1 = 0;
layout(constant_id = 8) const int S2 = 0;
layout(constant_id = 9) const int S3 = 0;
layout(constant_id = 10) const int S4 = 0;
layout(constant_id = 11) const int S5 = 0;
layout(constant_id = 12) const int T0 = 0;
layout(constant_id = 13) const int T1 = 0;
layout(constant_id = 14) const int T2 = 0;
layout(constant_id = 15) const int T3 = 0;
layout(constant_id = 16) const int T4 = 0;
layout(constant_id = 17) const int T5 = 0;
layout(constant_id = 18) const int SRC_OFFSET = 0;
layout(constant_id = 19) const int DST_OFFSET = 0;
layout(constant_id = 20) const int ESIZE = 4;

layout(std430, set = 0, binding = 0) readonly buffer Input { uint x[]; };
layout(std430, set = 0, binding = 1) buffer Output { uint y[]; };

void main() {
  const uint o = linear_id();
  if (o >= uint(D0 * D1 * D2 * D3 * D4 * D5)) return;
  int r = int(o);
  const int i5 = r % D5; r /= D5;
  const int i4 = r % D4; r /= D4;
  const int i3 = r % D3; r /= D3;
  const int i2 = r % D2; r /= D2;
  const int i1 = r % D1; r /= D1;
  const int i0 = r;
  const int s = SRC_OFFSET + i0 * S0 + i1 * S1 + i2 * S2 + i3 * S3 + i4 * S4 + i5 * S5;
  const int d = DST_OFFSET + i0 * T0 + i1 * T1 + i2 * T2 + i3 * T3 + i4 * T4 + i5 * T5;
  const uvec2 v = LOAD_RAW(x, s, ESIZE);
  STORE_RAW(y, d, ESIZE, v);
}
