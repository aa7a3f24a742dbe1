// Gather with indices read at run time (ops/gather.cpp: token ids of an embedding lookup, the
// ArgMax of a decoder): the input read as [OUTER, AXIS, INNER], the output as
// [OUTER, COUNT, INNER] with out[o][i][r] = x[o][index[i]][r], elements of ESIZE bytes moved as
// raw bits (typed.glsl; float32 included). Indices are int64 (IDX64 = 1, two words, read
// without int64 arithmetic) or int32; a negative one counts from the end. An index outside
// [-AXIS, AXIS) sets the check flag (the run fails naming the node, as core's Gather does) and
// writes a zero element instead of reading outside the input.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "typed.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const int OUTER = 1;
layout(constant_id = 1) const int AXIS = 1;
layout(constant_id = 2) const int COUNT = 1;
layout(constant_id = 3) const int INNER = 1;
layout(constant_id = 4) const int ESIZE = 4;
layout(constant_id = 5) const int IDX64 = 1;

layout(std430, set = 0, binding = 0) readonly buffer Input { uint x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Indices { uint index[]; };
layout(std430, set = 0, binding = 2) buffer Flag { uint flag; };
layout(std430, set = 0, binding = 3) buffer Output { uint y[]; };

void main() {
  const uint o = linear_id();
  if (o >= uint(OUTER * COUNT * INNER)) return;
  const int r = int(o) % INNER;
  const int i = (int(o) / INNER) % COUNT;
  const int outer = int(o) / (INNER * COUNT);
  // The index as an int when it fits one (an int64's high word only sign-extends the low one).
  int k = int(IDX64 != 0 ? index[2 * i] : index[i]);
  bool ok = true;
  if (IDX64 != 0) ok = index[2 * i + 1] == (k < 0 ? 0xffffffffu : 0u);
  ok = ok && k >= -AXIS && k < AXIS;
  uvec2 v = uvec2(0u);
  if (ok) {
    if (k < 0) k += AXIS;
    v = LOAD_RAW(x, (outer * AXIS + k) * INNER + r, ESIZE);
  } else {
    flag = 1u;
  }
  STORE_RAW(y, int(o), ESIZE, v);
}
