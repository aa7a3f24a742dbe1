// Values that are not float32 (and float32 values read by the shaders that handle every dtype):
// a buffer is a `uint` array holding the elements packed as on the host (region.hpp
// element_bytes), so int8/uint8/bool/half need no 8- or 16-bit storage feature. An element is
// carried as a uvec2 of raw bits (y: the high word of an int64). Type codes match region.hpp
// TypeCode: 0 float32, 1 half (a float32 value of a half region), 2 int64, 3 int32, 4 int8,
// 5 uint8, 6 bool.
#ifndef TESSERA_VULKAN_TYPED_GLSL
#define TESSERA_VULKAN_TYPED_GLSL

#define T_F32 0
#define T_F16 1
#define T_I64 2
#define T_I32 3
#define T_I8 4
#define T_U8 5
#define T_BOOL 6

// Macros, not functions: GLSL cannot pass a buffer array to a function. `i` is an element
// index, `n` the element's bytes (1, 2, 4 or 8).
#define LOAD_RAW(buf, i, n)                                                       \
  ((n) == 8   ? uvec2(buf[2 * (i)], buf[2 * (i) + 1])                             \
   : (n) == 4 ? uvec2(buf[(i)], 0u)                                               \
   : (n) == 2 ? uvec2((buf[(i) >> 1] >> (uint((i) & 1) * 16u)) & 0xffffu, 0u)     \
              : uvec2((buf[(i) >> 2] >> (uint((i) & 3) * 8u)) & 0xffu, 0u))

// Elements narrower than a word share it with their neighbours, which other invocations (or a
// later dispatch of a Concat) write: clearing and setting only the element's bits with two
// atomics leaves the neighbours' bits alone whatever the order.
#define STORE_RAW(buf, i, n, v)                                  \
  {                                                              \
    if ((n) == 8) {                                              \
      buf[2 * (i)] = (v).x;                                      \
      buf[2 * (i) + 1] = (v).y;                                  \
    } else if ((n) == 4) {                                       \
      buf[(i)] = (v).x;                                          \
    } else {                                                     \
      const uint bits_ = (n) == 2 ? 16u : 8u;                    \
      const uint per_ = 32u / bits_;                             \
      const uint shift_ = uint(i) % per_ * bits_;                \
      const uint mask_ = ((1u << bits_) - 1u) << shift_;         \
      atomicAnd(buf[uint(i) / per_], ~mask_);                    \
      atomicOr(buf[uint(i) / per_], ((v).x << shift_) & mask_);  \
    }                                                            \
  }

int type_bytes(int t) {
  return t == T_I64 ? 8 : t == T_F16 ? 2 : (t == T_F32 || t == T_I32) ? 4 : 1;
}

bool is_float_type(int t) { return t == T_F32 || t == T_F16; }

float raw_to_float(uvec2 r, int t) {
  return t == T_F16 ? unpackHalf2x16(r.x).x : uintBitsToFloat(r.x);
}

// NaN from the bits: a compiler may assume comparisons never see NaN, a bit test it cannot.
bool raw_is_nan(uvec2 r, int t) {
  if (t == T_F16) return (r.x & 0x7fffu) > 0x7c00u;
  return (r.x & 0x7fffffffu) > 0x7f800000u;
}

uvec2 float_to_raw(float v, int t) {
  return t == T_F16 ? uvec2(packHalf2x16(vec2(v, 0.0)) & 0xffffu, 0u)
                    : uvec2(floatBitsToUint(v), 0u);
}

#ifdef TYPED_INT64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

// The integer value of integer (or bool) raw bits: sign-extended for int32/int8.
int64_t raw_to_int(uvec2 r, int t) {
  if (t == T_I64) return int64_t(packUint2x32(r));
  if (t == T_I32) return int64_t(int(r.x));
  if (t == T_I8) return int64_t(bitfieldExtract(int(r.x), 0, 8));
  return int64_t(r.x);
}

// `v` wrapped to type t (modular, as numpy's astype and core's integer arithmetic).
uvec2 int_to_raw(int64_t v, int t) {
  const uvec2 w = unpackUint2x32(uint64_t(v));
  if (t == T_I64) return w;
  if (t == T_I32) return uvec2(w.x, 0u);
  if (t == T_BOOL) return uvec2(v != 0 ? 1u : 0u, 0u);
  return uvec2(w.x & 0xffu, 0u);
}

// Any value as a float (int64 rounds to the nearest float).
float raw_as_float(uvec2 r, int t) {
  return is_float_type(t) ? raw_to_float(r, t) : float(raw_to_int(r, t));
}
#endif

#endif
