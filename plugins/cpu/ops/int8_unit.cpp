// Reading an int8 unit's quantization parameters (int8_unit.hpp).
#include "ops/int8_unit.hpp"

#include <cmath>

namespace tessera::cpu {
namespace {

enum : int32_t { kX = 0, kXScale, kXZero, kW, kWScale, kWZero, kYScale, kYZero, kBias };

bool is_byte(const tsr_tensor* t) {
  return t != nullptr && (t->dtype == TSR_DTYPE_UINT8 || t->dtype == TSR_DTYPE_INT8);
}

int32_t byte_at(const tsr_tensor* t, int64_t i) {
  if (t->dtype == TSR_DTYPE_INT8) return static_cast<const int8_t*>(t->data)[i];
  return static_cast<const uint8_t*>(t->data)[i];
}

}  // namespace

std::string query_int8_unit(const NodeView& node, int64_t channels) {
  const tsr_tensor* x = node.input(kX);
  const tsr_tensor* w = node.input(kW);
  if (!is_byte(x) || !is_byte(node.output(0))) return "x and y must be int8 or uint8";
  if (w == nullptr || w->dtype != TSR_DTYPE_INT8 || w->data == nullptr) {
    return "only constant int8 weights are implemented";
  }
  for (int32_t i : {kXScale, kWScale, kYScale}) {
    if (constant_f32(node.input(i)) == nullptr) return "scales must be float32 constants";
  }
  for (int32_t i : {kXZero, kWZero, kYZero}) {
    const tsr_tensor* z = node.input(i);
    if (!is_byte(z) || z->data == nullptr) return "zero points must be int8/uint8 constants";
  }
  const tsr_tensor* ws = node.input(kWScale);
  if (numel(*ws) != 1 && numel(*ws) != channels) return "w_scale must be per tensor or channel";
  const tsr_tensor* wz = node.input(kWZero);
  for (int64_t i = 0; i < numel(*wz); ++i) {
    if (byte_at(wz, i) != 0) return "only weights with zero points of 0 are implemented";
  }
  const tsr_tensor* b = node.input(kBias);
  if (b != nullptr && (b->dtype != TSR_DTYPE_INT32 || b->data == nullptr || numel(*b) != channels)) {
    return "the bias must be an int32 constant, one per output channel";
  }
  return "";
}

Int8UnitParams int8_unit_params(const NodeView& node, int64_t channels) {
  Int8UnitParams p;
  const tsr_tensor* y = node.output(0);
  p.x_signed = node.input(kX)->dtype == TSR_DTYPE_INT8;
  p.x_zero = byte_at(node.input(kXZero), 0);
  p.x_zero_unsigned = p.x_zero + (p.x_signed ? 128 : 0);
  const float x_scale = constant_f32(node.input(kXScale))[0];
  const float y_scale = constant_f32(node.input(kYScale))[0];
  const tsr_tensor* ws = node.input(kWScale);
  const float* w_scale = constant_f32(ws);
  const tsr_tensor* b = node.input(kBias);
  for (int64_t c = 0; c < channels; ++c) {
    // The order of core's reference: (x_scale * w_scale) / y_scale.
    p.multiplier.push_back((x_scale * w_scale[numel(*ws) == 1 ? 0 : c]) / y_scale);
    p.bias.push_back(b != nullptr ? static_cast<const int32_t*>(b->data)[c] : 0);
  }
  p.rq.is_signed = y->dtype == TSR_DTYPE_INT8;
  p.rq.zero = byte_at(node.input(kYZero), 0);
  const int64_t type_lo = p.rq.is_signed ? -128 : 0, type_hi = p.rq.is_signed ? 127 : 255;
  const int64_t out_min = node.attr_int("output_min", type_lo);
  const int64_t out_max = node.attr_int("output_max", type_hi);
  p.rq.lo = static_cast<float>(out_min - p.rq.zero);
  p.rq.hi = static_cast<float>(out_max - p.rq.zero);
  return p;
}

}  // namespace tessera::cpu
