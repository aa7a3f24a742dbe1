// Gather along one axis with constant indices (ops/gather.cpp): the input read as
// [OUTER, AXIS, INNER], the output as [OUTER, COUNT, INNER] with out[o][i][r] =
// x[o][index[i]][r] (indices made non-negative at compile time).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int OUTER = 1;
layout(constant_id = 1) const int AXIS = 1;
layout(constant_id = 2) const int COUNT = 1;
layout(constant_id = 3) const int INNER = 1;

layout(std430, set = 0, binding = 0) readonly buffer Input { STORE x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Indices { int index[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Output { STORE y[]; };

void main() {
  const uint o = linear_id();
  if (o >= uint(OUTER * COUNT * INNER)) return;
  const int r = int(o) % INNER;
  const int i = (int(o) / INNER) % COUNT;
  const int outer = int(o) / (INNER * COUNT);
  y[o] = x[(outer * AXIS + index[i]) * INNER + r];
}
