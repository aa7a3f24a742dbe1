// Shared by every adreno program. Texture layout of a rank-4 NCHW tensor (N, C, H, W), C4 =
// ceil(C / 4): an image2d of width W * C4 and height N * H; texel (c4 * W + w, n * H + h) holds
// channels 4*c4 .. 4*c4+3 of pixel (n, h, w) as RGBA, channels past C are zero.
// Every read is in bounds (kernels test coordinates themselves), so no border handling is needed.
__constant sampler_t kSampler = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;

#ifndef OPW
#define OPW 1
#endif

inline float lane_of(float4 v, int i) {
  return i == 0 ? v.x : (i == 1 ? v.y : (i == 2 ? v.z : v.w));
}
