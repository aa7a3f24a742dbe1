// Shared helpers prepended to every mali kernel source: fused activations on NCHW4c blocks
// (tsr_activate, for one float, and TSR_FOR_UNROLLED are in common/helpers.cl).

// NCHW4c (see layout.cl): four channels per float4. Padded lanes of a block hold zeros; kernels
// that could make them non-zero (an activation with f(0) != 0) clear the lanes of channels
// >= `channels` through tsr_mask4, so every NCHW4c buffer keeps zero padding.
inline float4 tsr_activate4(float4 v, int act, float a, float b) {
  if (act == 1) return fmax(v, (float4)(0.0f));
  if (act == 2) return fmin(fmax(v, (float4)(a)), (float4)(b));
  if (act == 3) return select(v * a, v, isgreaterequal(v, (float4)(0.0f)));
  return v;
}
inline float4 tsr_mask4(float4 v, int first_channel, int channels) {
  const int left = channels - first_channel;
  if (left >= 4) return v;
  return (float4)(v.x, left > 1 ? v.y : 0.0f, left > 2 ? v.z : 0.0f, 0.0f);
}

// Build-time knob "vec" of the element-wise, copy and pool kernels: floats a work-item handles
// as one vector (floatv, loaded and stored with vloadn / vstoren; VEC 1 is plain float).
// TSR_IOTA is (0, 1, .., VEC - 1) and TSR_REPEAT4(f4) a float4 repeated to VEC floats (VEC >= 4).
#ifndef VEC
#define VEC 1
#endif
#define TSR_CAT_INNER(a, b) a##b
#define TSR_CAT(a, b) TSR_CAT_INNER(a, b)
#if VEC == 1
typedef float floatv;
typedef int intv;
#define TSR_VLOAD(p) (*(p))
#define TSR_VSTORE(v, p) (*(p) = (v))
#define TSR_IOTA 0
#else
typedef TSR_CAT(float, VEC) floatv;
typedef TSR_CAT(int, VEC) intv;
#define TSR_VLOAD(p) TSR_CAT(vload, VEC)(0, p)
#define TSR_VSTORE(v, p) TSR_CAT(vstore, VEC)(v, 0, p)
#endif
#if VEC == 4
#define TSR_IOTA ((int4)(0, 1, 2, 3))
#define TSR_REPEAT4(f) (f)
#elif VEC == 8
#define TSR_IOTA ((int8)(0, 1, 2, 3, 4, 5, 6, 7))
#define TSR_REPEAT4(f) ((float8)((f), (f)))
#elif VEC == 16
#define TSR_IOTA ((int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
#define TSR_REPEAT4(f) ((float16)((f), (f), (f), (f)))
#elif VEC != 1
#error "VEC must be 1, 4, 8 or 16"
#endif
