// gather.comp for values that are not float32 (ops/gather.cpp): out[o][i][r] =
// x[o][index[i]][r] with elements of ESIZE bytes moved as raw bits (typed.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "typed.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int OUTER = 1;
layout(constant_id = 1) const int AXIS = 1;
layout(constant_id = 2) const int COUNT = 1;
layout(constant_id = 3) const int INNER = 1;
layout(constant_id = 4) const int ESIZE = 4;

layout(std430, set = 0, binding = 0) readonly buffer Input { uint x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Indices { int index[]; };
layout(std430, set = 0, binding = 2) buffer Output { uint y[]; };

void main() {
  const uint o = linear_id();
  if (o >= uint(OUTER * COUNT * INNER)) return;
  const int r = int(o) % INNER;
  const int i = (int(o) / INNER) % COUNT;
  const int outer = int(o) / (INNER * COUNT);
  const uvec2 v = LOAD_RAW(x, (outer * AXIS + index[i]) * INNER + r, ESIZE);
  STORE_RAW(y, int(o), ESIZE, v);
}
