// Comparisons and logic with ONNX broadcasting (ops/typed.cpp lower_compare): a bool output
// from two operands of type TYPE read through their own strides. OP: 0 Equal, 1 Less,
// 2 LessOrEqual, 3 Greater, 4 GreaterOrEqual (float32 compares as floats, a NaN making all of
// them false; integers and bool as int64), 5 And, 6 Or, 7 Xor, 8 Not (of a; bool operands).
#version 450
#extension GL_GOOGLE_include_directive : require
#define TYPED_INT64
#include "typed.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int OP = 0;
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
layout(constant_id = 19) const int TYPE = 0;

layout(std430, set = 0, binding = 0) readonly buffer InA { uint a[]; };
layout(std430, set = 0, binding = 1) readonly buffer InB { uint b[]; };
layout(std430, set = 0, binding = 2) buffer Output { uint y[]; };

bool compare_float(float x, float z) {
  if (OP == 0) return x == z;
  if (OP == 1) return x < z;
  if (OP == 2) return x <= z;
  if (OP == 3) return x > z;
  return x >= z;
}

bool compare_int(int64_t x, int64_t z) {
  if (OP == 0) return x == z;
  if (OP == 1) return x < z;
  if (OP == 2) return x <= z;
  if (OP == 3) return x > z;
  return x >= z;
}

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
  const uvec2 ra = LOAD_RAW(a, i0 * A0 + i1 * A1 + i2 * A2 + i3 * A3 + i4 * A4 + i5 * A5, n);
  const uvec2 rb = LOAD_RAW(b, i0 * B0 + i1 * B1 + i2 * B2 + i3 * B3 + i4 * B4 + i5 * B5, n);
  bool v;
  if (OP >= 5) {
    const bool p = ra.x != 0u;
    const bool q = rb.x != 0u;
    v = OP == 5 ? (p && q) : OP == 6 ? (p || q) : OP == 7 ? (p != q) : !p;
  } else if (is_float_type(TYPE)) {
    // A NaN compares false (also for Equal), whatever the compiler assumes about NaN.
    v = !raw_is_nan(ra, TYPE) && !raw_is_nan(rb, TYPE) &&
        compare_float(raw_to_float(ra, TYPE), raw_to_float(rb, TYPE));
  } else {
    v = compare_int(raw_to_int(ra, TYPE), raw_to_int(rb, TYPE));
  }
  STORE_RAW(y, int(o), 1, uvec2(v ? 1u : 0u, 0u));
}
