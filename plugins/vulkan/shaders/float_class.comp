// IsNaN and IsInf (ops/is_nan.cpp, ops/is_inf.cpp): a bool per float element, decided from the
// bits (a compiler may assume a float is never NaN or infinite and fold isnan()/isinf() away).
// MODE 0: NaN; MODE 1: infinity, +inf when POS, -inf when NEG.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "typed.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int COUNT = 1;
layout(constant_id = 1) const int TYPE = 0;
layout(constant_id = 2) const int MODE = 0;
layout(constant_id = 3) const int POS = 1;
layout(constant_id = 4) const int NEG = 1;

layout(std430, set = 0, binding = 0) readonly buffer Input { uint x[]; };
layout(std430, set = 0, binding = 1) buffer Output { uint y[]; };

void main() {
  const uint o = linear_id();
  if (o >= uint(COUNT)) return;
  const uvec2 r = LOAD_RAW(x, int(o), type_bytes(TYPE));
  bool v;
  if (MODE == 0) {
    v = raw_is_nan(r, TYPE);
  } else {
    const bool half_type = TYPE == T_F16;
    const uint magnitude = r.x & (half_type ? 0x7fffu : 0x7fffffffu);
    const bool negative = (r.x & (half_type ? 0x8000u : 0x80000000u)) != 0u;
    v = magnitude == (half_type ? 0x7c00u : 0x7f800000u) && (negative ? NEG != 0 : POS != 0);
  }
  STORE_RAW(y, int(o), 1, uvec2(v ? 1u : 0u, 0u));
}
