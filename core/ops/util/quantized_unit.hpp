// What the int8 unit ops (TesseraQLinearConv, TesseraQLinearMatMul) share: their inputs' order,
// the checks of their scales and zero points, and the requantization every kernel of a unit
// computes the same way (the reference kernels here, the cpu plugin's int8 kernels), so that
// they agree bit for bit. Header-only like the other op helpers.
//
// A unit is the int8 form of DequantizeLinear -> Conv/MatMul/Gemm [-> Relu/Clip] ->
// QuantizeLinear (core/src/passes/quantized_units.cpp makes them). Its inputs follow ONNX's
// QLinearConv: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, and an
// optional int32 bias (scale x_scale * w_scale, zero point 0). Attributes output_min and
// output_max (ints, default the output type's range) clamp the quantized result: the fused
// activation, since a non-decreasing Q(v) has Q(clamp(v, lo, hi)) = clamp(Q(v), Q(lo), Q(hi)).
//
// Requantization of an int32 sum `acc` for output channel c:
//   m_c = (x_scale * w_scale[c]) / y_scale      (float32 arithmetic, in this order)
//   y   = nearbyint(clamp(float(acc) * m_c, output_min - zy, output_max - zy)) + zy
// with rounding half to even; clamping before rounding to integer bounds equals saturating after.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "../op.hpp"
#include "broadcast.hpp"

namespace tessera::ops {

inline constexpr const char* kQLinearConvUnit = "TesseraQLinearConv";
inline constexpr const char* kQLinearMatMulUnit = "TesseraQLinearMatMul";
// DequantizeLinear(a), DequantizeLinear(b) -> Add / Mul -> [Relu/Clip ->] QuantizeLinear
// (tessera_q_linear_add.cpp, tessera_q_linear_mul.cpp; QBinaryParams below).
inline constexpr const char* kQLinearAddUnit = "TesseraQLinearAdd";
inline constexpr const char* kQLinearMulUnit = "TesseraQLinearMul";

enum QUnitInput : size_t {
  kQX = 0,
  kQXScale,
  kQXZero,
  kQW,
  kQWScale,
  kQWZero,
  kQYScale,
  kQYZero,
  kQBias,
  kQUnitInputs
};

// Why `scale` (one of a unit's or a DequantizeLinear's/QuantizeLinear's scales) cannot be used,
// or "": every element must be positive and finite.
inline std::string bad_scale(const Tensor& scale) {
  const float* s = scale.data<float>();
  for (int64_t i = 0; i < scale.numel(); ++i) {
    if (!(s[i] > 0.0f) || !std::isfinite(s[i])) {
      return "scale element " + std::to_string(i) + " is " + std::to_string(s[i]) +
             "; a quantization scale must be positive and finite";
    }
  }
  return "";
}

inline int32_t qtype_min(DType t) {
  return t == DType::kInt8 ? -128 : 0;
}
inline int32_t qtype_max(DType t) {
  return t == DType::kInt8 ? 127 : 255;
}

// Element i of an int8/uint8/int32 tensor as int32.
inline int32_t quant_element(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kInt8) return t.data<int8_t>()[i];
  if (t.dtype() == DType::kUInt8) return t.data<uint8_t>()[i];
  return t.data<int32_t>()[i];
}

// The requantization of one output channel: see the header comment.
struct Requant {
  float multiplier = 1.0f;
  float lo = 0.0f, hi = 0.0f;  // output_min - zy, output_max - zy
  int32_t zero = 0;
  int32_t apply(int32_t acc) const {
    const float v = std::min(std::max(static_cast<float>(acc) * multiplier, lo), hi);
    return static_cast<int32_t>(std::nearbyint(v)) + zero;
  }
};

// The node's checked quantization parameters, all constants.
struct UnitParams {
  DType x_type = DType::kUInt8, w_type = DType::kInt8, y_type = DType::kUInt8;
  int32_t x_zero = 0;
  std::vector<int32_t> w_zero;   // one per output channel (repeated when per tensor)
  std::vector<int32_t> bias;     // one per output channel, zeros when absent
  std::vector<Requant> requant;  // one per output channel
};

// Checks a unit's inputs for `channels` output channels and returns its parameters; every
// failure names the node. x's dtype must be x_zero_point's, w's w_zero_point's.
inline UnitParams unit_params(const InferContext& ctx, int64_t channels) {
  ctx.expect_inputs(kQBias, kQUnitInputs);
  ctx.expect_dtype(kQX, {DType::kUInt8, DType::kInt8});
  ctx.expect_dtype(kQW, {DType::kUInt8, DType::kInt8});
  for (size_t i : {kQXScale, kQWScale, kQYScale}) ctx.expect_dtype(i, {DType::kFloat32});
  for (size_t i : {kQXZero, kQWZero, kQYZero}) ctx.expect_dtype(i, {DType::kUInt8, DType::kInt8});
  UnitParams p;
  p.x_type = ctx.input(kQX).dtype;
  p.w_type = ctx.input(kQW).dtype;
  p.y_type = ctx.input(kQYZero).dtype;
  if (ctx.input(kQXZero).dtype != p.x_type) ctx.fail("x_zero_point's dtype must be x's");
  if (ctx.input(kQWZero).dtype != p.w_type) ctx.fail("w_zero_point's dtype must be w's");
  const Tensor& xs = ctx.constant_input(kQXScale);
  const Tensor& ws = ctx.constant_input(kQWScale);
  const Tensor& ys = ctx.constant_input(kQYScale);
  const Tensor& xz = ctx.constant_input(kQXZero);
  const Tensor& wz = ctx.constant_input(kQWZero);
  const Tensor& yz = ctx.constant_input(kQYZero);
  for (const Tensor* t : {&xs, &ys, &xz, &yz}) {
    if (t->numel() != 1) ctx.fail("x and y scales and zero points must have one element");
  }
  if ((ws.numel() != 1 && ws.numel() != channels) || wz.numel() != ws.numel()) {
    ctx.fail("w_scale and w_zero_point must have 1 or " + std::to_string(channels) +
             " elements (one per output channel), got " + std::to_string(ws.numel()) + " and " +
             std::to_string(wz.numel()));
  }
  for (const Tensor* t : {&xs, &ws, &ys}) {
    const std::string why = bad_scale(*t);
    if (!why.empty()) ctx.fail(why);
  }
  const int64_t out_min = ctx.node.attrs.get_int("output_min", qtype_min(p.y_type));
  const int64_t out_max = ctx.node.attrs.get_int("output_max", qtype_max(p.y_type));
  if (out_min < qtype_min(p.y_type) || out_max > qtype_max(p.y_type) || out_min > out_max) {
    ctx.fail("output_min/output_max [" + std::to_string(out_min) + ", " + std::to_string(out_max) +
             "] must be an ordered range of " + dtype_name(p.y_type));
  }
  if (ctx.has_input(kQBias)) {
    ctx.expect_dtype(kQBias, {DType::kInt32});
    if (ctx.input(kQBias).shape != Shape{channels}) {
      ctx.fail("the bias must have shape [" + std::to_string(channels) + "]");
    }
  }
  p.x_zero = quant_element(xz, 0);
  const int32_t zy = quant_element(yz, 0);
  const float x_scale = xs.data<float>()[0], y_scale = ys.data<float>()[0];
  for (int64_t c = 0; c < channels; ++c) {
    const int64_t k = ws.numel() == 1 ? 0 : c;
    p.w_zero.push_back(quant_element(wz, k));
    p.bias.push_back(ctx.has_input(kQBias) ? quant_element(ctx.constant_input(kQBias), c) : 0);
    Requant r;
    r.multiplier = (x_scale * ws.data<float>()[k]) / y_scale;
    r.lo = static_cast<float>(out_min - zy);
    r.hi = static_cast<float>(out_max - zy);
    r.zero = zy;
    p.requant.push_back(r);
  }
  return p;
}

// Stores requantized `value` as the output's type.
inline void store_quant(Tensor& y, int64_t i, int32_t value) {
  if (y.dtype() == DType::kInt8) {
    y.data<int8_t>()[i] = static_cast<int8_t>(value);
  } else {
    y.data<uint8_t>()[i] = static_cast<uint8_t>(value);
  }
}

// The binary units' inputs (a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale,
// y_zero_point; one element each) and output_min/output_max, checked; failures name the node.
enum QBinaryInput : size_t {
  kQA = 0,
  kQAScale,
  kQAZero,
  kQB,
  kQBScale,
  kQBZero,
  kQBinYScale,
  kQBinYZero,
  kQBinaryInputs
};

struct QBinaryParams {
  float sa = 1, sb = 1, sy = 1;
  int32_t za = 0, zb = 0, zy = 0;
  int32_t lo = 0, hi = 255;  // output_min, output_max
};

inline QBinaryParams binary_unit_params(const InferContext& ctx) {
  ctx.expect_inputs(kQBinaryInputs, kQBinaryInputs);
  for (size_t i : {kQA, kQB, kQAZero, kQBZero, kQBinYZero}) {
    ctx.expect_dtype(i, {DType::kUInt8, DType::kInt8});
  }
  for (size_t i : {kQAScale, kQBScale, kQBinYScale}) ctx.expect_dtype(i, {DType::kFloat32});
  if (ctx.input(kQAZero).dtype != ctx.input(kQA).dtype ||
      ctx.input(kQBZero).dtype != ctx.input(kQB).dtype) {
    ctx.fail("a zero point's dtype must be its input's");
  }
  QBinaryParams p;
  float* scales[] = {&p.sa, &p.sb, &p.sy};
  const size_t scale_inputs[] = {kQAScale, kQBScale, kQBinYScale};
  for (size_t i = 0; i < 3; ++i) {
    const Tensor& s = ctx.constant_input(scale_inputs[i]);
    if (s.numel() != 1) ctx.fail("scales must have one element");
    const std::string why = bad_scale(s);
    if (!why.empty()) ctx.fail(why);
    *scales[i] = s.data<float>()[0];
  }
  int32_t* zeros[] = {&p.za, &p.zb, &p.zy};
  const size_t zero_inputs[] = {kQAZero, kQBZero, kQBinYZero};
  for (size_t i = 0; i < 3; ++i) {
    const Tensor& z = ctx.constant_input(zero_inputs[i]);
    if (z.numel() != 1) ctx.fail("zero points must have one element");
    *zeros[i] = quant_element(z, 0);
  }
  const DType y = ctx.input(kQBinYZero).dtype;
  p.lo = static_cast<int32_t>(ctx.node.attrs.get_int("output_min", qtype_min(y)));
  p.hi = static_cast<int32_t>(ctx.node.attrs.get_int("output_max", qtype_max(y)));
  if (p.lo < qtype_min(y) || p.hi > qtype_max(y) || p.lo > p.hi) {
    ctx.fail("output_min/output_max must be an ordered range of " + std::string(dtype_name(y)));
  }
  return p;
}

// The quantized result of the float value v = op(DQ(a), DQ(b)): saturate(nearbyint(v / sy) + zy).
inline int32_t quantize_binary(float v, const QBinaryParams& p) {
  const float q = std::nearbyint(v / p.sy) + static_cast<float>(p.zy);
  return static_cast<int32_t>(
      std::min(std::max(q, static_cast<float>(p.lo)), static_cast<float>(p.hi)));
}

// Shape inference of TesseraQLinearAdd/Mul: the output zero point's type, the inputs' numpy
// broadcast shape.
inline void infer_binary_unit(InferContext& ctx) {
  binary_unit_params(ctx);
  ctx.outputs.at(0) = {ctx.input(kQBinYZero).dtype,
                       broadcast_shapes(ctx.input(kQA).shape, ctx.input(kQB).shape, ctx.where)};
}

// y = quantized combine(dequantized a, dequantized b) per element, broadcast: the float steps of
// the DequantizeLinear -> Add/Mul -> QuantizeLinear ops a binary unit replaces.
template <class Combine>
void compute_binary_unit(ComputeContext& ctx, Combine combine) {
  const InferContext ictx = context_of_constants(ctx);
  const QBinaryParams p = binary_unit_params(ictx);
  const Tensor& a = ctx.input(kQA);
  const Tensor& b = ctx.input(kQB);
  Tensor& y = ctx.outputs[0];
  const BroadcastIndexer ai(a.shape(), y.shape()), bi(b.shape(), y.shape());
  for (int64_t i = 0; i < y.numel(); ++i) {
    const float da = static_cast<float>(quant_element(a, ai.offset(i)) - p.za) * p.sa;
    const float db = static_cast<float>(quant_element(b, bi.offset(i)) - p.zb) * p.sb;
    store_quant(y, i, quantize_binary(combine(da, db), p));
  }
}

}  // namespace tessera::ops
