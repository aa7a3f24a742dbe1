// y = x * scale[c] + shift[c] over [N, C, INNER] (ops/batch_normalization.cpp, with scale and
// shift folded from the statistics at compile time), then an activation.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int COUNT = 1;
layout(constant_id = 1) const int C = 1;
layout(constant_id = 2) const int INNER = 1;
layout(constant_id = 3) const int ACT = 0;
layout(constant_id = 4) const int ACT_A = 0;
layout(constant_id = 5) const int ACT_B = 0;

layout(std430, set = 0, binding = 0) readonly buffer Input { STORE x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Scale { STORE scale[]; };
layout(std430, set = 0, binding = 2) readonly buffer Shift { STORE shift[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Output { STORE y[]; };

void main() {
  const uint o = linear_id();
  if (o >= uint(COUNT)) return;
  const int c = (int(o) / INNER) % C;
  const float v = float(x[o]) * float(scale[c]) + float(shift[c]);
  y[o] = STORE(activate(ACT, v, intBitsToFloat(ACT_A), intBitsToFloat(ACT_B)));
}
