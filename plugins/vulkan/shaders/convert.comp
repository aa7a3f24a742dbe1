// Region inputs in and outputs out of half storage (the _f16 variants): TO_STORE 1 converts the
// float32 staging buffer into a STORE value, 0 a STORE value into float32 staging. In the fp32
// build both sides are float (unused: fp32 regions copy with vkCmdCopyBuffer).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int COUNT = 1;
layout(constant_id = 1) const int TO_STORE = 1;

layout(std430, set = 0, binding = 0) readonly buffer Source32 { float source32[]; };
layout(std430, set = 0, binding = 1) readonly buffer Source { STORE source[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Target32 { float target32[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Target { STORE target[]; };

void main() {
  const uint o = linear_id();
  if (o >= uint(COUNT)) return;
  if (TO_STORE != 0) target[o] = STORE(source32[o]);
  else target32[o] = float(source[o]);
}
