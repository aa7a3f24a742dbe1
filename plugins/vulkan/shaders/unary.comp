// One element-wise function (activation.glsl's codes) over a dense tensor (ops/unary.cpp).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int COUNT = 1;
layout(constant_id = 1) const int ACT = 0;
layout(constant_id = 2) const int ACT_A = 0;
layout(constant_id = 3) const int ACT_B = 0;

layout(std430, set = 0, binding = 0) readonly buffer Input { STORE x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Output { STORE y[]; };

void main() {
  const uint o = linear_id();
  if (o >= uint(COUNT)) return;
  y[o] = STORE(activate(ACT, float(x[o]), intBitsToFloat(ACT_A), intBitsToFloat(ACT_B)));
}
