// Trilu (ops/trilu.cpp): the upper (UPPER = 1: column - row >= K) or lower (column - row <= K)
// triangle of each [ROWS, COLS] matrix of the last two axes, zeros elsewhere; any dtype, moved
// as raw elements of BYTES bytes (a zero is all bits clear in every dtype).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "typed.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int COUNT = 1;
layout(constant_id = 1) const int ROWS = 1;
layout(constant_id = 2) const int COLS = 1;
layout(constant_id = 3) const int K = 0;
layout(constant_id = 4) const int UPPER = 1;
layout(constant_id = 5) const int BYTES = 4;

layout(std430, set = 0, binding = 0) readonly buffer Input { uint x[]; };
layout(std430, set = 0, binding = 1) buffer Output { uint y[]; };

void main() {
  const uint o = linear_id();
  if (o >= uint(COUNT)) return;
  const int col = int(o) % COLS;
  const int row = int(o) / COLS % ROWS;
  const bool keep = UPPER != 0 ? col - row >= K : col - row <= K;
  STORE_RAW(y, int(o), BYTES, keep ? LOAD_RAW(x, int(o), BYTES) : uvec2(0u, 0u));
}
