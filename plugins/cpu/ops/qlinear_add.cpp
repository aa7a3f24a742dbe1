// TesseraQLinearAdd and TesseraQLinearMul (core's int8 Add and Mul units) on int8/uint8 tensors:
// inputs of the output's shape (a residual Add) in one pass of kernels/int8.hpp's int8_add, in
// parallel chunks; one input per channel (a squeeze-excitation scale) plane by plane with that
// value broadcast; any other broadcast element by element through the same kernel.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "ops/int8_unit.hpp"

namespace tessera::cpu {
namespace {

bool is_byte(const tsr_tensor* t) {
  return t != nullptr && (t->dtype == TSR_DTYPE_UINT8 || t->dtype == TSR_DTYPE_INT8);
}

// Element strides of t read as y's shape under numpy broadcasting (0 along broadcast axes).
std::vector<int64_t> broadcast_strides(const tsr_tensor& t, const tsr_tensor& y) {
  std::vector<int64_t> strides(static_cast<size_t>(y.rank), 0);
  int64_t stride = 1;
  for (int32_t d = t.rank - 1, e = y.rank - 1; d >= 0; --d, --e) {
    if (t.dims[d] != 1) strides[static_cast<size_t>(e)] = stride;
    stride *= t.dims[d];
  }
  return strides;
}

// y = a + b with broadcasting, element by element through the same kernel.
void broadcast_add(const uint8_t* a, const uint8_t* b, const std::vector<int64_t>& ys,
                   const std::vector<int64_t>& as, const std::vector<int64_t>& bs,
                   const Int8AddParams& p, uint8_t* y) {
  std::vector<int64_t> index(ys.size(), 0);
  int64_t n = 1;
  for (int64_t d : ys) n *= d;
  int64_t oa = 0, ob = 0;
  for (int64_t i = 0; i < n; ++i) {
    int8_add(a + oa, b + ob, 1, p, y + i);
    for (size_t d = ys.size(); d-- > 0;) {  // next index, odometer style
      oa += as[d];
      ob += bs[d];
      if (++index[d] < ys[d]) break;
      oa -= as[d] * ys[d];
      ob -= bs[d] * ys[d];
      index[d] = 0;
    }
  }
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

namespace {

Int8AddParams binary_params(const NodeView& node) {
  Int8AddParams p;
  p.mul = node.op_type() == "TesseraQLinearMul";
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
  return p;
}

// Whether `small` is one value per (batch or 1, channel) of the rank-4 y: a squeeze-excitation
// scale [N, C, 1, 1].
bool per_channel(const tsr_tensor& small, const tsr_tensor& y) {
  return y.rank == 4 && small.rank == 4 && (small.dims[0] == 1 || small.dims[0] == y.dims[0]) &&
         small.dims[1] == y.dims[1] && small.dims[2] == 1 && small.dims[3] == 1;
}

// The step over planes: each (n, c) plane of `full` with the one value of `small` (a and b swapped
// in p when a is the small one: both ops commute exactly in float).
Step per_channel_step(Int8AddParams p, const tsr_tensor& small, const tsr_tensor& y, int32_t full,
                      int32_t one, int32_t out) {
  p.b_scalar = true;
  const int64_t n = y.dims[0], c = y.dims[1], plane = y.dims[2] * y.dims[3];
  const bool batched = small.dims[0] != 1;
  return [=](std::vector<float*>& v) {
    const auto* x = reinterpret_cast<const uint8_t*>(v[full]);
    const auto* s = reinterpret_cast<const uint8_t*>(v[one]);
    auto* out_bytes = reinterpret_cast<uint8_t*>(v[out]);
    tbb::parallel_for(int64_t{0}, n * c, [&](int64_t nc) {
      const int64_t k = batched ? nc : nc % c;
      int8_add(x + nc * plane, s + k, plane, p, out_bytes + nc * plane);
    });
  };
}

}  // namespace

Step build_qlinear_add(BuildContext& ctx) {
  const NodeView& node = ctx.node;
  Int8AddParams p = binary_params(node);
  const int64_t n = numel(*node.output(0));
  const int32_t a = node.input_index(0), b = node.input_index(3), out = ctx.output;
  const tsr_tensor& y = *node.output(0);
  const bool a_full = dims(*node.input(0)) == dims(y), b_full = dims(*node.input(3)) == dims(y);
  if (a_full && !b_full && per_channel(*node.input(3), y)) {
    return per_channel_step(p, *node.input(3), y, a, b, out);
  }
  if (b_full && !a_full && per_channel(*node.input(0), y)) {
    std::swap(p.sa, p.sb);
    std::swap(p.za, p.zb);
    std::swap(p.a_signed, p.b_signed);
    return per_channel_step(p, *node.input(0), y, b, a, out);
  }
  if (!a_full || !b_full) {
    const std::vector<int64_t> ys = dims(y), as = broadcast_strides(*node.input(0), y),
                               bs = broadcast_strides(*node.input(3), y);
    return [=](std::vector<float*>& v) {
      broadcast_add(reinterpret_cast<const uint8_t*>(v[a]), reinterpret_cast<const uint8_t*>(v[b]),
                    ys, as, bs, p, reinterpret_cast<uint8_t*>(v[out]));
    };
  }
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
