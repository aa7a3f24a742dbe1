// Shared helpers prepended to every mali kernel source: fused activations.
// act: 0 none, 1 relu, 2 clip(a, b), 3 leaky relu (slope a).
inline float tsr_activate(float v, int act, float a, float b) {
  if (act == 1) return fmax(v, 0.0f);
  if (act == 2) return fmin(fmax(v, a), b);
  if (act == 3) return v >= 0.0f ? v : a * v;
  return v;
}
