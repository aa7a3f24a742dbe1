// TopK (ops/top_k.cpp): the input read as [OUTER, AXIS, INNER]; one invocation per input
// element counts the elements of its column that come before it, and when that rank is below K
// writes itself to [outer, rank, inner] of the values and its index (int64, two words) to the
// indices. A rank needs no sort, no shared memory and no second pass; each invocation scans its
// column, so ops/top_k.cpp bounds AXIS (the work grows with AXIS squared).
// Order, as core and the OpenCL plugins: larger first (smaller with LARGEST = 0), a NaN above
// every number (first when largest, last when smallest), equal values (NaNs among themselves)
// in index order, so the ranks of a column are a permutation and every slot is written once.
// No int64 arithmetic: the index is below 2^31, its high word 0, so no shaderInt64 is needed.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "typed.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int OUTER = 1;
layout(constant_id = 1) const int AXIS = 1;
layout(constant_id = 2) const int INNER = 1;
layout(constant_id = 3) const int K = 1;
layout(constant_id = 4) const int LARGEST = 1;
layout(constant_id = 5) const int TYPE = 0;      // of the input
layout(constant_id = 6) const int OUT_TYPE = 0;  // of the values (half when the region is)

layout(std430, set = 0, binding = 0) readonly buffer Input { uint x[]; };
layout(std430, set = 0, binding = 1) buffer Values { uint v[]; };
layout(std430, set = 0, binding = 2) buffer Indices { uint idx[]; };

// Whether (b, j) comes before (a, i) in the output order.
bool before(uvec2 b, int j, uvec2 a, int i) {
  const bool nb = raw_is_nan(b, TYPE), na = raw_is_nan(a, TYPE);
  if (nb || na) {
    if (nb && na) return j < i;
    return LARGEST != 0 ? nb : na;
  }
  const float fb = raw_to_float(b, TYPE), fa = raw_to_float(a, TYPE);
  if (fb == fa) return j < i;
  return LARGEST != 0 ? fb > fa : fb < fa;
}

void main() {
  const uint e = linear_id();
  if (e >= uint(OUTER * AXIS * INNER)) return;
  const int inner = int(e) % INNER;
  const int i = int(e) / INNER % AXIS;
  const int outer = int(e) / INNER / AXIS;
  const int base = outer * AXIS * INNER + inner;
  const int n = type_bytes(TYPE);
  const uvec2 a = LOAD_RAW(x, int(e), n);
  int rank = 0;
  for (int j = 0; j < AXIS && rank < K; ++j) {
    if (j != i && before(LOAD_RAW(x, base + j * INNER, n), j, a, i)) ++rank;
  }
  if (rank >= K) return;
  const int o = (outer * K + rank) * INNER + inner;
  STORE_RAW(v, o, type_bytes(OUT_TYPE), float_to_raw(raw_to_float(a, TYPE), OUT_TYPE));
  idx[2 * o] = uint(i);
  idx[2 * o + 1] = 0u;
}
