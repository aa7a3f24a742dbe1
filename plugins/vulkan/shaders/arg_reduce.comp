// ArgMax/ArgMin (ops/typed.cpp lower_arg_reduce): the input read as [OUTER, AXIS, INNER], one
// invocation per (outer, inner) scanning the axis; the int64 index is written as two words.
// Ties keep the first index, or the last with LAST = 1; a NaN wins over every number (the first
// NaN, or the last with LAST), as core's util/arg_extreme.hpp and numpy.
#version 450
#extension GL_GOOGLE_include_directive : require
#define TYPED_INT64
#include "typed.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int OUTER = 1;
layout(constant_id = 1) const int AXIS = 1;
layout(constant_id = 2) const int INNER = 1;
layout(constant_id = 3) const int TYPE = 0;
layout(constant_id = 4) const int IS_MAX = 1;
layout(constant_id = 5) const int LAST = 0;

layout(std430, set = 0, binding = 0) readonly buffer Input { uint x[]; };
layout(std430, set = 0, binding = 1) buffer Output { uint y[]; };

void main() {
  const uint o = linear_id();
  if (o >= uint(OUTER * INNER)) return;
  const int inner = int(o) % INNER;
  const int base = int(o) / INNER * AXIS * INNER + inner;
  const int n = type_bytes(TYPE);
  const bool is_float = is_float_type(TYPE);
  int best = 0;
  uvec2 b = LOAD_RAW(x, base, n);
  for (int k = 1; k < AXIS; ++k) {
    const uvec2 v = LOAD_RAW(x, base + k * INNER, n);
    bool take;
    if (is_float && raw_is_nan(b, TYPE)) {
      take = LAST != 0 && raw_is_nan(v, TYPE);
    } else if (is_float && raw_is_nan(v, TYPE)) {
      take = true;
    } else if (is_float) {
      const float fv = raw_to_float(v, TYPE), fb = raw_to_float(b, TYPE);
      take = IS_MAX != 0 ? (LAST != 0 ? fv >= fb : fv > fb) : (LAST != 0 ? fv <= fb : fv < fb);
    } else {
      const int64_t iv = raw_to_int(v, TYPE), ib = raw_to_int(b, TYPE);
      take = IS_MAX != 0 ? (LAST != 0 ? iv >= ib : iv > ib) : (LAST != 0 ? iv <= ib : iv < ib);
    }
    if (take) {
      best = k;
      b = v;
    }
  }
  y[2 * o] = uint(best);
  y[2 * o + 1] = 0u;
}
