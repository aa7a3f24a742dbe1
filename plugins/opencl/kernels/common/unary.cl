// Shared by the OpenCL plugins (embedded in each next to its own kernels; core OpenCL C only).
// y = f(x) element-wise over n floats, f chosen by `op` (UnaryCode in
// tessera_opencl/op_helpers.hpp), `a` and `b` its parameters (Elu's alpha, Selu's gamma, ...).
__kernel void unary_any_f32(__global const float* x, __global float* y, int n, int op, float a,
                            float b) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float v = x[i];
  float r;
  switch (op) {
    case 0: r = sqrt(v); break;
    case 1: r = 1.0f / v; break;
    case 2: r = exp(v); break;
    case 3: r = log(v); break;
    case 4: r = -v; break;
    case 5: r = fabs(v); break;
    case 6: r = floor(v); break;
    case 7: r = ceil(v); break;
    // log(1 + e^v) without overflow for large v.
    case 8: r = v > 20.0f ? v : log1p(exp(v)); break;
    case 9: r = v > 0.0f ? v : a * (exp(v) - 1.0f); break;
    case 10: r = sin(v); break;
    case 11: r = cos(v); break;
    case 12: r = tanh(v); break;
    case 13: r = v >= 0.0f ? v : a * v; break;
    case 14: r = v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : v; break;
    case 15: r = rint(v); break;  // ONNX Round: halves to even
    case 16: r = b * (v > 0.0f ? v : a * (exp(v) - 1.0f)); break;  // Selu (alpha, gamma)
    case 17: r = fmax(0.0f, v) + fmin(0.0f, a * (exp(v / a) - 1.0f)); break;  // Celu
    case 18: r = v / (1.0f + fabs(v)); break;  // Softsign
    case 19: r = 0.5f * v * (1.0f + erf(v * 0.70710678118654752f)); break;  // Gelu
    case 20:  // Gelu, approximate = "tanh"
      r = 0.5f * v * (1.0f + tanh(0.79788456080286536f * (v + 0.044715f * v * v * v)));
      break;
    case 21: r = v * tanh(v > 20.0f ? v : log1p(exp(v))); break;  // Mish
    case 22: r = v > a ? v : 0.0f; break;                          // ThresholdedRelu
    case 23: r = tan(v); break;
    case 24: r = atan(v); break;
    case 25: r = v < -a ? v + b : v > a ? v - b : 0.0f; break;  // Shrink (lambd, bias)
    case 26: r = asin(v); break;
    case 27: r = acos(v); break;
    case 28: r = sinh(v); break;
    case 29: r = cosh(v); break;
    default: r = v; break;
  }
  y[i] = r;
}
