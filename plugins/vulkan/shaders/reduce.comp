// Reductions over the middle axis of [OUTER, LEN, INNER] (ops/reduce.cpp, GlobalAveragePool,
// GlobalMaxPool): a work-group of 64 per output element, partial results in shared memory,
// accumulated in fp32.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"

layout(local_size_x = 64) in;

// 0 sum, 1 mean, 2 max, 3 min, 4 sum|x|, 5 sqrt(sum x^2), 6 sum x^2, 7 log(sum exp), 8 prod,
// 9 log(sum)
layout(constant_id = 0) const int OP = 0;
layout(constant_id = 1) const int OUTER = 1;
layout(constant_id = 2) const int LEN = 1;
layout(constant_id = 3) const int INNER = 1;

layout(std430, set = 0, binding = 0) readonly buffer Input { STORE x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Output { STORE y[]; };

shared float partial[64];

float combine(float a, float b) {
  if (OP == 2) return max(a, b);
  if (OP == 3) return min(a, b);
  if (OP == 8) return a * b;
  return a + b;
}

float start() {
  if (OP == 2) return -3.402823466e38;
  if (OP == 3) return 3.402823466e38;
  if (OP == 8) return 1.0;
  return 0.0;
}

void main() {
  const int out_index = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x);
  const int t = int(gl_LocalInvocationID.x);
  const bool live = out_index < OUTER * INNER;
  const int outer = out_index / INNER;
  const int inner = out_index % INNER;
  const int base = outer * LEN * INNER + inner;
  // log-sum-exp: shift by the maximum first.
  float shift = 0.0;
  if (OP == 7) {
    float m = -3.402823466e38;
    if (live)
      for (int i = t; i < LEN; i += 64) m = max(m, float(x[base + i * INNER]));
    partial[t] = m;
    barrier();
    for (int s = 32; s > 0; s >>= 1) {
      if (t < s) partial[t] = max(partial[t], partial[t + s]);
      barrier();
    }
    shift = partial[0];
    barrier();
  }
  float acc = start();
  if (live) {
    for (int i = t; i < LEN; i += 64) {
      float v = float(x[base + i * INNER]);
      if (OP == 4) v = abs(v);
      if (OP == 5 || OP == 6) v = v * v;
      if (OP == 7) v = exp(v - shift);
      acc = combine(acc, v);
    }
  }
  partial[t] = acc;
  barrier();
  for (int s = 32; s > 0; s >>= 1) {
    if (t < s) partial[t] = combine(partial[t], partial[t + s]);
    barrier();
  }
  if (t == 0 && live) {
    float r = partial[0];
    if (OP == 1) r /= float(LEN);
    if (OP == 5) r = sqrt(r);
    if (OP == 7) r = log(r) + shift;
    if (OP == 9) r = log(r);
    y[out_index] = STORE(r);
  }
}
