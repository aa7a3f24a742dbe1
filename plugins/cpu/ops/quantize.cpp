// QuantizeLinear (float32 -> uint8 / int8) and DequantizeLinear (uint8 / int8 / int32 -> float32)
// with constant scales and zero points, per tensor or per axis: the activations of a QDQ model
// (ONNX Runtime's quantize_static writes one; its weights' DequantizeLinear folds at load). A
// QuantizeLinear whose only reader is the matching DequantizeLinear is a fake quantization in
// float, which fusion.cpp makes a post op of the pair's producer (quant_pair_fn).
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/int8.hpp"
#include "ops/loops.hpp"
#include "ops/op.hpp"

namespace tessera::cpu {
namespace {

// A node's scale and zero point, laid out over its quantized tensor: index (i / inner) % count.
struct QuantParams {
  std::vector<float> scale;
  std::vector<int32_t> zero;
  int64_t count = 1, inner = 1;
  int32_t qdtype = TSR_DTYPE_UINT8;  // the quantized tensor's dtype
  int32_t qlo = 0, qhi = 255;
};

// Reads node's scale (input 1) and zero point (input 2) for its quantized tensor `q`; "" or why
// not.
std::string quant_params(const NodeView& node, const tsr_tensor* q, QuantParams* p) {
  const tsr_tensor* s = node.input(1);
  const float* scale = constant_f32(s);
  if (scale == nullptr) return "the scale must be a float32 constant";
  if (node.attr_int("block_size", 0) != 0) return "blocked quantization is not implemented";
  if (s->rank > 1) return "the scale must be a scalar or 1-D";
  const int64_t n = numel(*s);
  p->scale.assign(scale, scale + n);
  p->qdtype = q->dtype;
  if (q->dtype == TSR_DTYPE_INT8) {
    p->qlo = -128;
    p->qhi = 127;
  } else if (q->dtype == TSR_DTYPE_UINT8) {
    p->qlo = 0;
    p->qhi = 255;
  } else if (q->dtype != TSR_DTYPE_INT32) {
    return "only uint8, int8 and (dequantized) int32 are implemented";
  }
  p->zero.assign(static_cast<size_t>(n), 0);
  const tsr_tensor* z = node.input(2);
  if (z != nullptr) {
    if (z->data == nullptr) return "the zero point must be a constant";
    if (z->dtype != q->dtype || numel(*z) != n) return "the zero point must match the scale";
    for (int64_t i = 0; i < n; ++i) {
      if (z->dtype == TSR_DTYPE_INT8) p->zero[i] = static_cast<const int8_t*>(z->data)[i];
      if (z->dtype == TSR_DTYPE_UINT8) p->zero[i] = static_cast<const uint8_t*>(z->data)[i];
      if (z->dtype == TSR_DTYPE_INT32) p->zero[i] = static_cast<const int32_t*>(z->data)[i];
    }
  }
  if (n > 1) {
    const int64_t axis = normalize_axis(node.attr_int("axis", 1), q->rank);
    if (axis < 0 || q->dims[axis] != n) return "a per-axis scale must have the axis's extent";
    p->count = n;
    for (int64_t d = axis + 1; d < q->rank; ++d) p->inner *= q->dims[d];
  }
  return "";
}

// Rows of `inner` elements sharing one scale (per tensor: chunks of 16K), in parallel chunks of
// whole rows.
template <typename Fn>
void for_rows(const QuantParams& p, int64_t n, Fn&& fn) {
  if (n == 0) return;
  const int64_t inner = p.count == 1 ? std::min<int64_t>(n, 16384) : p.inner;
  const int64_t rows = (n + inner - 1) / std::max<int64_t>(1, inner);
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, inner));
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, rows, grain),
                    [&](const tbb::blocked_range<int64_t>& r) {
                      for (int64_t row = r.begin(); row < r.end(); ++row) {
                        const int64_t c = p.count == 1 ? 0 : row % p.count;
                        const int64_t i0 = row * inner, i1 = std::min(n, i0 + inner);
                        fn(c, i0, i1);
                      }
                    });
}

// Half to even, as ONNX and ONNX Runtime round; NaN -> lo (kernels/int8.hpp's int8_quantize).
template <typename Q>
void quantize(const QuantParams& p, const float* x, int64_t n, Q* y) {
  for_rows(p, n, [&](int64_t c, int64_t i0, int64_t i1) {
    int8_quantize(x + i0, i1 - i0, p.scale[static_cast<size_t>(c)],
                  p.zero[static_cast<size_t>(c)], p.qlo, p.qhi, std::is_signed_v<Q>,
                  reinterpret_cast<uint8_t*>(y + i0));
  });
}

template <typename Q>
void dequantize(const QuantParams& p, const Q* x, int64_t n, float* y) {
  for_rows(p, n, [&](int64_t c, int64_t i0, int64_t i1) {
    const float s = p.scale[static_cast<size_t>(c)];
    const int64_t z = p.zero[static_cast<size_t>(c)];
    for (int64_t i = i0; i < i1; ++i) {
      y[i] = static_cast<float>(static_cast<int64_t>(x[i]) - z) * s;
    }
  });
}

}  // namespace

std::string query_quantize(const RegionView& region, const NodeView& node) {
  (void)region;
  const bool q = node.op_type() == "QuantizeLinear";
  const tsr_tensor* x = node.input(0);
  const tsr_tensor* y = node.output(0);
  if (q ? !is_f32(x) : !is_f32(y)) return "the float side must be float32";
  const tsr_tensor* quantized = q ? y : x;
  if (q && quantized->dtype == TSR_DTYPE_INT32) return "QuantizeLinear to int32 is not implemented";
  QuantParams p;
  return quant_params(node, quantized, &p);
}

Step build_quantize(BuildContext& ctx) {
  const NodeView& node = ctx.node;
  const bool q = node.op_type() == "QuantizeLinear";
  QuantParams p;
  quant_params(node, q ? node.output(0) : node.input(0), &p);
  const int64_t n = numel(*node.input(0));
  const int32_t in = node.input_index(0), out = ctx.output;
  if (q) {
    return [=](std::vector<float*>& v) {
      if (p.qdtype == TSR_DTYPE_INT8) {
        quantize(p, v[in], n, reinterpret_cast<int8_t*>(v[out]));
      } else {
        quantize(p, v[in], n, reinterpret_cast<uint8_t*>(v[out]));
      }
    };
  }
  return [=](std::vector<float*>& v) {
    if (p.qdtype == TSR_DTYPE_INT8) {
      dequantize(p, reinterpret_cast<const int8_t*>(v[in]), n, v[out]);
    } else if (p.qdtype == TSR_DTYPE_UINT8) {
      dequantize(p, reinterpret_cast<const uint8_t*>(v[in]), n, v[out]);
    } else {
      dequantize(p, reinterpret_cast<const int32_t*>(v[in]), n, v[out]);
    }
  };
}

bool quant_pair_fn(const NodeView& quantize, const NodeView& dequantize, UnaryFn* fn) {
  if (quantize.op_type() != "QuantizeLinear" || dequantize.op_type() != "DequantizeLinear" ||
      dequantize.input_index(0) != quantize.output_index(0)) {
    return false;
  }
  QuantParams a, b;
  if (!quant_params(quantize, quantize.output(0), &a).empty() ||
      !quant_params(dequantize, dequantize.input(0), &b).empty()) {
    return false;
  }
  if (a.count != 1 || b.count != 1 || a.scale != b.scale || a.zero != b.zero ||
      a.qdtype == TSR_DTYPE_INT32 || !(a.scale[0] > 0.0f) || !std::isfinite(a.scale[0])) {
    return false;
  }
  *fn = UnaryFn{};
  fn->op = UnaryOp::kFakeQuant;
  fn->alpha = a.scale[0];
  fn->beta = static_cast<float>(a.zero[0]);
  fn->gamma = static_cast<float>(a.qlo);
  return true;
}

Step build_fake_quant(BuildContext& ctx, const UnaryFn& fn) {
  const int32_t in = ctx.node.input_index(0), out = ctx.output;
  const int64_t n = numel(*ctx.node.input(0));
  return [=](std::vector<float*>& v) { unary_parallel(fn, v[in], v[out], n); };
}

}  // namespace tessera::cpu
