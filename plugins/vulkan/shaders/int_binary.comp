// Integer Add/Sub/Mul/Div/Max/Min with ONNX broadcasting (ops/elementwise.cpp, integer
// outputs): operands and output of type TYPE (int64, int32, int8, uint8), computed in int64_t
// and wrapped to TYPE like core's integer arithmetic. Div truncates toward zero; its divisor is
// a constant checked free of zeros at compile time (a shader cannot report the error);
// lowest / -1 wraps to lowest.
#version 450
#extension GL_GOOGLE_include_directive : require
#define TYPED_INT64
#include "typed.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int OP = 0;  // 0 add, 1 sub, 2 mul, 3 div, 4 max, 5 min
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
layout(constant_id = 19) const int TYPE = 2;

layout(std430, set = 0, binding = 0) readonly buffer InA { uint a[]; };
layout(std430, set = 0, binding = 1) readonly buffer InB { uint b[]; };
layout(std430, set = 0, binding = 2) buffer Output { uint y[]; };

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
  const int n = type_bytes(TYPE);
  const int64_t x = raw_to_int(LOAD_RAW(a, i0 * A0 + i1 * A1 + i2 * A2 + i3 * A3 + i4 * A4 + i5 * A5, n), TYPE);
  const int64_t z = raw_to_int(LOAD_RAW(b, i0 * B0 + i1 * B1 + i2 * B2 + i3 * B3 + i4 * B4 + i5 * B5, n), TYPE);
  int64_t v;
  // Add/Sub/Mul in uint64_t: wrapping, where signed overflow has no defined result.
  if (OP == 0) v = int64_t(uint64_t(x) + uint64_t(z));
  else if (OP == 1) v = int64_t(uint64_t(x) - uint64_t(z));
  else if (OP == 2) v = int64_t(uint64_t(x) * uint64_t(z));
  // lowest / -1 overflows: wrap to lowest as core does (negation in uint64_t).
  else if (OP == 3) v = z == -1l ? int64_t(0ul - uint64_t(x)) : x / z;
  else if (OP == 4) v = max(x, z);
  else v = min(x, z);
  STORE_RAW(y, int(o), n, int_to_raw(v, TYPE));
}
