// Shared helpers prepended to every mali kernel source: fused activations.
// act: 0 none, 1 relu, 2 clip(a, b), 3 leaky relu (slope a).
inline float tsr_activate(float v, int act, float a, float b) {
  if (act == 1) return fmax(v, 0.0f);
  if (act == 2) return fmin(fmax(v, a), b);
  if (act == 3) return v >= 0.0f ? v : a * v;
  return v;
}

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
