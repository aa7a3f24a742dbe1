// LayerNormalization over the trailing LEN elements of each of ROWS rows (ops/layer_norm.cpp):
// a work-group of 64 per row; the mean, then the variance around it, accumulated in fp32.
// Instance and group norms (ops/norm.cpp) read scale and bias per channel instead: element e of
// the tensor takes index (e / SCALE_PERIOD) % SCALE_COUNT (SCALE_PERIOD 0: index i in the row).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int ROWS = 1;
layout(constant_id = 1) const int LEN = 1;
layout(constant_id = 2) const int EPSILON = 0;  // float bits
layout(constant_id = 3) const int HAS_BIAS = 0;
layout(constant_id = 4) const int SCALE_PERIOD = 0;
layout(constant_id = 5) const int SCALE_COUNT = 1;

layout(std430, set = 0, binding = 0) readonly buffer Input { STORE x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Scale { STORE scale[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { STORE bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Output { STORE y[]; };

shared float partial[64];

float row_sum(float v, int t) {
  partial[t] = v;
  barrier();
  for (int s = 32; s > 0; s >>= 1) {
    if (t < s) partial[t] += partial[t + s];
    barrier();
  }
  const float total = partial[0];
  barrier();
  return total;
}

void main() {
  const int row = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x);
  const int t = int(gl_LocalInvocationID.x);
  const bool live = row < ROWS;
  const int base = row * LEN;
  float sum = 0.0;
  if (live)
    for (int i = t; i < LEN; i += 64) sum += float(x[base + i]);
  const float mean = row_sum(sum, t) / float(LEN);
  float sq = 0.0;
  if (live)
    for (int i = t; i < LEN; i += 64) {
      const float d = float(x[base + i]) - mean;
      sq += d * d;
    }
  const float inv = inversesqrt(row_sum(sq, t) / float(LEN) + intBitsToFloat(EPSILON));
  if (!live) return;
  for (int i = t; i < LEN; i += 64) {
    const int p = SCALE_PERIOD == 0 ? i : ((base + i) / SCALE_PERIOD) % SCALE_COUNT;
    float v = (float(x[base + i]) - mean) * inv * float(scale[p]);
    if (HAS_BIAS != 0) v += float(bias[p]);
    y[base + i] = STORE(v);
  }
}
