// Softmax / LogSoftmax over the middle axis of [OUTER, LEN, INNER] (ops/softmax.cpp): a
// work-group of 64 per row: the maximum, the sum of exponentials, then the outputs.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int OUTER = 1;
layout(constant_id = 1) const int LEN = 1;
layout(constant_id = 2) const int INNER = 1;
layout(constant_id = 3) const int LOG = 0;

layout(std430, set = 0, binding = 0) readonly buffer Input { STORE x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Output { STORE y[]; };

shared float partial[64];

void main() {
  const int row = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x);
  const int t = int(gl_LocalInvocationID.x);
  const bool live = row < OUTER * INNER;
  const int base = (row / INNER) * LEN * INNER + row % INNER;
  float m = -3.402823466e38;
  if (live)
    for (int i = t; i < LEN; i += 64) m = max(m, float(x[base + i * INNER]));
  partial[t] = m;
  barrier();
  for (int s = 32; s > 0; s >>= 1) {
    if (t < s) partial[t] = max(partial[t], partial[t + s]);
    barrier();
  }
  m = partial[0];
  barrier();
  float sum = 0.0;
  if (live)
    for (int i = t; i < LEN; i += 64) sum += exp(float(x[base + i * INNER]) - m);
  partial[t] = sum;
  barrier();
  for (int s = 32; s > 0; s >>= 1) {
    if (t < s) partial[t] += partial[t + s];
    barrier();
  }
  sum = partial[0];
  if (!live) return;
  const float log_sum = log(sum);
  for (int i = t; i < LEN; i += 64) {
    const float v = float(x[base + i * INNER]) - m;
    y[base + i * INNER] = STORE(LOG != 0 ? v - log_sum : exp(v) / sum);
  }
}
