// Element-wise functions, by code (ops/op.cpp keeps the same numbering): a kernel's epilogue
// (conv, gemm, binary) applies the activation fused into it; unary.comp applies any of them.
#ifndef TESSERA_VULKAN_ACTIVATION_GLSL
#define TESSERA_VULKAN_ACTIVATION_GLSL

const int ACT_NONE = 0;
const int ACT_RELU = 1;
const int ACT_CLIP = 2;
const int ACT_SIGMOID = 3;
const int ACT_HARD_SIGMOID = 4;
const int ACT_HARD_SWISH = 5;
const int ACT_LEAKY_RELU = 6;
const int ACT_TANH = 7;
const int ACT_ELU = 8;
const int ACT_EXP = 9;
const int ACT_LOG = 10;
const int ACT_SQRT = 11;
const int ACT_NEG = 12;
const int ACT_ABS = 13;
const int ACT_ERF = 14;
const int ACT_FLOOR = 15;
const int ACT_CEIL = 16;
const int ACT_RECIPROCAL = 17;
const int ACT_IDENTITY = 18;
const int ACT_GELU = 19;
const int ACT_SOFTPLUS = 20;
const int ACT_SILU = 21;
const int ACT_MISH = 22;
const int ACT_SIN = 23;
const int ACT_COS = 24;
const int ACT_SELU = 25;
const int ACT_TAN = 26;
const int ACT_ATAN = 27;
const int ACT_SIGN = 28;
const int ACT_ROUND = 29;
const int ACT_SOFTSIGN = 30;
const int ACT_CELU = 31;
const int ACT_THRESHOLDED_RELU = 32;
const int ACT_SHRINK = 33;

// Abramowitz and Stegun 7.1.26 refined: |error| < 1.5e-7.
float erf_approx(float x) {
  float s = sign(x);
  float a = abs(x);
  float t = 1.0 / (1.0 + 0.3275911 * a);
  float y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t +
                   0.254829592) * t * exp(-a * a);
  return s * y;
}

float sigmoid(float x) { return 1.0 / (1.0 + exp(-x)); }

float softplus(float x) { return x > 20.0 ? x : log(1.0 + exp(x)); }

float activate(int code, float x, float a, float b) {
  if (code == ACT_NONE) return x;
  if (code == ACT_RELU) return max(x, 0.0);
  if (code == ACT_CLIP) return min(max(x, a), b);
  if (code == ACT_SIGMOID) return sigmoid(x);
  if (code == ACT_HARD_SIGMOID) return clamp(a * x + b, 0.0, 1.0);
  if (code == ACT_HARD_SWISH) return x * clamp(x / 6.0 + 0.5, 0.0, 1.0);
  if (code == ACT_LEAKY_RELU) return x >= 0.0 ? x : a * x;
  if (code == ACT_TANH) return tanh(clamp(x, -15.0, 15.0));
  if (code == ACT_ELU) return x >= 0.0 ? x : a * (exp(x) - 1.0);
  if (code == ACT_EXP) return exp(x);
  if (code == ACT_LOG) return log(x);
  if (code == ACT_SQRT) return sqrt(x);
  if (code == ACT_NEG) return -x;
  if (code == ACT_ABS) return abs(x);
  if (code == ACT_ERF) return erf_approx(x);
  if (code == ACT_FLOOR) return floor(x);
  if (code == ACT_CEIL) return ceil(x);
  if (code == ACT_RECIPROCAL) return 1.0 / x;
  if (code == ACT_IDENTITY) return x;
  if (code == ACT_GELU) return 0.5 * x * (1.0 + erf_approx(x * 0.70710678118654752));
  if (code == ACT_SOFTPLUS) return softplus(x);
  if (code == ACT_SILU) return x * sigmoid(x);
  if (code == ACT_MISH) return x * tanh(clamp(softplus(x), -15.0, 15.0));
  if (code == ACT_SIN) return sin(x);
  if (code == ACT_COS) return cos(x);
  if (code == ACT_SELU) return x > 0.0 ? b * x : b * a * (exp(x) - 1.0);
  if (code == ACT_TAN) return tan(x);
  if (code == ACT_ATAN) return atan(x);
  if (code == ACT_SIGN) return sign(x);
  if (code == ACT_ROUND) return roundEven(x);
  if (code == ACT_SOFTSIGN) return x / (1.0 + abs(x));
  if (code == ACT_CELU) return max(x, 0.0) + min(a * (exp(x / a) - 1.0), 0.0);
  if (code == ACT_THRESHOLDED_RELU) return x > a ? x : 0.0;
  if (code == ACT_SHRINK) return x < -a ? x + b : (x > a ? x - b : 0.0);
  return x;
}

#endif
