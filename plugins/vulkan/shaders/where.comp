// Where (ops/where.cpp): y = cond ? x : z with ONNX broadcasting of all three operands, the
// output walked as a rank-6 index and each operand read through its own strides (0 along
// broadcast dimensions). The condition is bool (1 byte); x, z and y have ESIZE-byte elements of
// any dtype, moved as raw bits (typed.glsl).
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
layout(constant_id = 6) const int C0 = 0;
layout(constant_id = 7) const int C1 = 0;
layout(constant_id = 8) const int C2 = 0;
layout(constant_id = 9) const int C3 = 0;
layout(constant_id = 10) const int C4 = 0;
layout(constant_id = 11) const int C5 = 0;
layout(constant_id = 12) const int X0 = 0;
layout(constant_id = 13) const int X1 = 0;
layout(constant_id = 14) const int X2 = 0;
layout(constant_id = 15) const int X3 = 0;
layout(constant_id = 16) const int X4 = 0;
layout(constant_id = 17) const int X5 = 0;
layout(constant_id = 18) const int Z0 = 0;
layout(constant_id = 19) const int Z1 = 0;
layout(constant_id = 20) const int Z2 = 0;
layout(constant_id = 21) const int Z3 = 0;
layout(constant_id = 22) const int Z4 = 0;
layout(constant_id = 23) const int Z5 = 0;
layout(constant_id = 24) const int ESIZE = 4;

layout(std430, set = 0, binding = 0) readonly buffer Cond { uint c[]; };
layout(std430, set = 0, binding = 1) readonly buffer InX { uint x[]; };
layout(std430, set = 0, binding = 2) readonly buffer InZ { uint z[]; };
layout(std430, set = 0, binding = 3) buffer Output { uint y[]; };

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
  const bool take_x = LOAD_RAW(c, i0 * C0 + i1 * C1 + i2 * C2 + i3 * C3 + i4 * C4 + i5 * C5, 1).x != 0u;
  uvec2 v;
  if (take_x) v = LOAD_RAW(x, i0 * X0 + i1 * X1 + i2 * X2 + i3 * X3 + i4 * X4 + i5 * X5, ESIZE);
  else v = LOAD_RAW(z, i0 * Z0 + i1 * Z1 + i2 * Z2 + i3 * Z3 + i4 * Z4 + i5 * Z5, ESIZE);
  STORE_RAW(y, int(o), ESIZE, v);
}
