// Element-wise binary ops with ONNX broadcasting (ops/binary.cpp): the output is walked as a
// rank-6 index, each operand read through its own strides (0 along broadcast dimensions).
// Epilogue: an activation.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int OP = 0;  // 0 add, 1 sub, 2 mul, 3 div, 4 max, 5 min, 6 pow, 7 prelu
layout(constant_id = 1) const int D0 = 1;
layout(constant_id = 2) const int D1 = 1;
layout(constant_id = 3) const int D2 = 1;
layout(constant_id = 4) const int D3 = 1;
layout(constant_id = 5) const int D4 = 1;
layout(constant_id = 6) const int D5 = 1;
layout(constant_id = 7) const int A0 = 0;
layout(constant_id = 8) const int A1 = 0;
layout(constant_id = 9) const int A2 = 0;
layout(constant_id = 10) const int A3 = 0;
layout(constant_id = 11) const int A4 = 0;
layout(constant_id = 12) const int A5 = 0;
layout(constant_id = 13) const int B0 = 0;
layout(constant_id = 14) const int B1 = 0;
layout(constant_id = 15) const int B2 = 0;
layout(constant_id = 16) const int B3 = 0;
layout(constant_id = 17) const int B4 = 0;
layout(constant_id = 18) const int B5 = 0;
layout(constant_id = 19) const int ACT = 0;
layout(constant_id = 20) const int ACT_A = 0;
layout(constant_id = 21) const int ACT_B = 0;

layout(std430, set = 0, binding = 0) readonly buffer InA { STORE a[]; };
layout(std430, set = 0, binding = 1) readonly buffer InB { STORE b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Output { STORE y[]; };

void main() {
  const uint o = linear_id();
  if (o >= uint(D0 * D1 * D2 * D3 * D4 * D5)) return;
  int r = int(o);
  const int i5 = r % D5; r /= D5;
  const int i4 = r % D4; r /= D4;
  const int i3 = r % D3; r /= D3;
  const int i2 = r % D2; r /= D2;
  const int i1 = r % D1; r /= D1;
  const int i0 = r;
  const float x = float(a[i0 * A0 + i1 * A1 + i2 * A2 + i3 * A3 + i4 * A4 + i5 * A5]);
  const float z = float(b[i0 * B0 + i1 * B1 + i2 * B2 + i3 * B3 + i4 * B4 + i5 * B5]);
  float v;
  if (OP == 0) v = x + z;
  else if (OP == 1) v = x - z;
  else if (OP == 2) v = x * z;
  else if (OP == 3) v = x / z;
  else if (OP == 4) v = max(x, z);
  else if (OP == 5) v = min(x, z);
  else if (OP == 6) {
    // GLSL's pow is undefined for x < 0 and for 0^0; ONNX follows C's pow.
    if (z == 0.0) v = 1.0;
    else if (z == 2.0) v = x * x;
    else if (z == floor(z)) {
      const float p = pow(abs(x), z);
      v = (x < 0.0 && mod(z, 2.0) == 1.0) ? -p : p;
    } else v = pow(x, z);
  }
  else v = x >= 0.0 ? x : x * z;
  y[o] = STORE(activate(ACT, v, intBitsToFloat(ACT_A), intBitsToFloat(ACT_B)));
}
