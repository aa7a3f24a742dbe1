// Cast between float32 (or half), int64, int32, int8, uint8 and bool (ops/cast.cpp), with
// core's semantics (core/ops/util/cast.hpp): float to integer truncates toward zero, saturates
// at the target's range and makes NaN 0; anything to bool is "!= 0" (NaN is true); integer
// narrowing wraps; int64 to float rounds to the nearest float.
#version 450
#extension GL_GOOGLE_include_directive : require
#define TYPED_INT64
#include "typed.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int COUNT = 1;
layout(constant_id = 1) const int FROM = 0;
layout(constant_id = 2) const int TO = 0;

layout(std430, set = 0, binding = 0) readonly buffer Input { uint x[]; };
layout(std430, set = 0, binding = 1) buffer Output { uint y[]; };

// Float to integer type TO: NaN -> 0, else truncated and saturated. The bounds are powers of two,
// exact in float: t <= lowest gives lowest, t >= max + 1 gives max.
int64_t float_to_int(float v) {
  if (isnan(v)) return 0;
  const float t = trunc(v);
  float lo, hi;  // lowest, max + 1
  int64_t lo_i, hi_i;
  if (TO == T_I64) { lo = -9223372036854775808.0; hi = 9223372036854775808.0;
                     lo_i = -9223372036854775807l - 1l; hi_i = 9223372036854775807l; }
  else if (TO == T_I32) { lo = -2147483648.0; hi = 2147483648.0; lo_i = -2147483648l; hi_i = 2147483647l; }
  else if (TO == T_I8) { lo = -128.0; hi = 128.0; lo_i = -128l; hi_i = 127l; }
  else { lo = 0.0; hi = 256.0; lo_i = 0l; hi_i = 255l; }
  if (t <= lo) return lo_i;
  if (t >= hi) return hi_i;
  return int64_t(t);
}

void main() {
  const uint o = linear_id();
  if (o >= uint(COUNT)) return;
  const uvec2 r = LOAD_RAW(x, int(o), type_bytes(FROM));
  uvec2 v;
  if (is_float_type(FROM)) {
    const float f = raw_to_float(r, FROM);
    if (is_float_type(TO)) v = float_to_raw(f, TO);
    else if (TO == T_BOOL) v = uvec2(raw_is_nan(r, FROM) || f != 0.0 ? 1u : 0u, 0u);
    else v = int_to_raw(raw_is_nan(r, FROM) ? int64_t(0) : float_to_int(f), TO);
  } else {
    const int64_t i = raw_to_int(r, FROM);
    if (is_float_type(TO)) v = float_to_raw(float(i), TO);
    else v = int_to_raw(i, TO);
  }
  STORE_RAW(y, int(o), type_bytes(TO), v);
}
