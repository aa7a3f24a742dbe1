// Pad (ops/pad.cpp): each output element of a rank-6 index reads the input at the index less
// the leading pads, or VALUE outside it (constant), the mirrored index (reflect) or the nearest
// edge (edge).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int MODE = 0;  // 0 constant, 1 reflect, 2 edge
layout(constant_id = 1) const int VALUE = 0;  // float bits
layout(constant_id = 2) const int O0 = 1;
layout(constant_id = 3) const int O1 = 1;
layout(constant_id = 4) const int O2 = 1;
layout(constant_id = 5) const int O3 = 1;
layout(constant_id = 6) const int O4 = 1;
layout(constant_id = 7) const int O5 = 1;
layout(constant_id = 8) const int I0 = 1;
layout(constant_id = 9) const int I1 = 1;
layout(constant_id = 10) const int I2 = 1;
layout(constant_id = 11) const int I3 = 1;
layout(constant_id = 12) const int I4 = 1;
layout(constant_id = 13) const int I5 = 1;
layout(constant_id = 14) const int P0 = 0;
layout(constant_id = 15) const int P1 = 0;
layout(constant_id = 16) const int P2 = 0;
layout(constant_id = 17) const int P3 = 0;
layout(constant_id = 18) const int P4 = 0;
layout(constant_id = 19) const int P5 = 0;

layout(std430, set = 0, binding = 0) readonly buffer Input { STORE x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Output { STORE y[]; };

// The input index along one axis, or -1 outside it (constant mode).
int source(int o, int pad, int len) {
  int i = o - pad;
  if (i >= 0 && i < len) return i;
  if (MODE == 0) return -1;
  if (MODE == 2) return clamp(i, 0, len - 1);
  if (len == 1) return 0;
  const int period = 2 * (len - 1);
  i = abs(i) % period;
  return i < len ? i : period - i;
}

void main() {
  const uint o = linear_id();
  if (o >= uint(O0 * O1 * O2 * O3 * O4 * O5)) return;
  int r = int(o);
  const int o5 = r % O5; r /= O5;
  const int o4 = r % O4; r /= O4;
  const int o3 = r % O3; r /= O3;
  const int o2 = r % O2; r /= O2;
  const int o1 = r % O1; r /= O1;
  const int o0 = r;
  const int i0 = source(o0, P0, I0);
  const int i1 = source(o1, P1, I1);
  const int i2 = source(o2, P2, I2);
  const int i3 = source(o3, P3, I3);
  const int i4 = source(o4, P4, I4);
  const int i5 = source(o5, P5, I5);
  if (min(min(min(i0, i1), min(i2, i3)), min(i4, i5)) < 0) {
    y[o] = STORE(intBitsToFloat(VALUE));
    return;
  }
  y[o] = x[((((i0 * I1 + i1) * I2 + i2) * I3 + i3) * I4 + i4) * I5 + i5];
}
