// TesseraQLinearAdd (core's int8 Add unit) on two int8/uint8 tensors of one shape (a residual
// Add): one pass of kernels/int8.hpp's int8_add over the elements, in parallel chunks.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "ops/int8_unit.hpp"

namespace tessera::cpu {
namespace {

bool is_byte(const tsr_tensor* t) {
  return t != nullptr && (t->dtype == TSR_DTYPE_UINT8 || t->dtype == TSR_DTYPE_INT8);
}

int32_t byte_at(const tsr_tensor* t) {
  if (t->dtype == TSR_DTYPE_INT8) return *static_cast<const int8_t*>(t->data);
  return *static_cast<const uint8_t*>(t->data);
}

}  // namespace

std::string query_qlinear_add(const RegionView& region, const NodeView& node) {
  (void)region;
  const tsr_tensor* a = node.input(0);
  const tsr_tensor* b = node.input(3);
  const tsr_tensor* y = node.output(0);
  if (!is_byte(a) || !is_byte(b) || !is_byte(y)) return "a, b and y must be int8 or uint8";
  if (dims(*a) != dims(*y) || dims(*b) != dims(*y)) {
    return "only inputs of the output's shape are implemented (no broadcasting)";
  }
  for (int32_t i : {1, 4, 6}) {
    const float* s = constant_f32(node.input(i));
    if (s == nullptr || numel(*node.input(i)) != 1) return "scales must be float32 constants";
  }
  for (int32_t i : {2, 5, 7}) {
    const tsr_tensor* z = node.input(i);
    if (!is_byte(z) || z->data == nullptr || numel(*z) != 1) {
      return "zero points must be int8/uint8 constants";
    }
  }
  return "";
}

Step build_qlinear_add(BuildContext& ctx) {
  const NodeView& node = ctx.node;
  Int8AddParams p;
  p.sa = constant_f32(node.input(1))[0];
  p.sb = constant_f32(node.input(4))[0];
  p.sy = constant_f32(node.input(6))[0];
  p.za = byte_at(node.input(2));
  p.zb = byte_at(node.input(5));
  p.zy = byte_at(node.input(7));
  p.a_signed = node.input(0)->dtype == TSR_DTYPE_INT8;
  p.b_signed = node.input(3)->dtype == TSR_DTYPE_INT8;
  p.y_signed = node.output(0)->dtype == TSR_DTYPE_INT8;
  p.lo = static_cast<int32_t>(node.attr_int("output_min", p.y_signed ? -128 : 0));
  p.hi = static_cast<int32_t>(node.attr_int("output_max", p.y_signed ? 127 : 255));
  const int64_t n = numel(*node.output(0));
  const int32_t a = node.input_index(0), b = node.input_index(3), out = ctx.output;
  return [p, n, a, b, out](std::vector<float*>& v) {
    const auto* x0 = reinterpret_cast<const uint8_t*>(v[a]);
    const auto* x1 = reinterpret_cast<const uint8_t*>(v[b]);
    auto* y = reinterpret_cast<uint8_t*>(v[out]);
    constexpr int64_t kChunk = 16384;
    tbb::parallel_for(int64_t{0}, (n + kChunk - 1) / kChunk, [&](int64_t c) {
      const int64_t i0 = c * kChunk;
      int8_add(x0 + i0, x1 + i0, std::min(kChunk, n - i0), p, y + i0);
    });
  };
}

}  // namespace tessera::cpu
